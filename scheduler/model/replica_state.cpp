#include "scheduler/model/replica_state.h"

#include <array>
#include <utility>

namespace orch {
namespace {

constexpr std::array<std::pair<ReplicaState, std::string_view>, 7> kReplicaNames{{
    {ReplicaState::present, "present"},
    {ReplicaState::copying, "copying"},
    {ReplicaState::verified, "verified"},
    {ReplicaState::corrupt, "corrupt"},
    {ReplicaState::missing, "missing"},
    {ReplicaState::deleted, "deleted"},
    {ReplicaState::refused, "refused"},
}};

constexpr std::array<std::pair<TransferState, std::string_view>, 6> kTransferNames{{
    {TransferState::queued, "queued"},
    {TransferState::running, "running"},
    {TransferState::verifying, "verifying"},
    {TransferState::done, "done"},
    {TransferState::failed, "failed"},
    {TransferState::cancelled, "cancelled"},
}};

constexpr std::array<std::pair<TransferPurpose, std::string_view>, 3> kPurposeNames{{
    {TransferPurpose::replication, "replication"},
    {TransferPurpose::staging, "staging"},
    {TransferPurpose::manual, "manual"},
}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E e) {
  for (const auto& [value, name] : names) {
    if (value == e) return name;
  }
  return "unknown";
}

template <typename E, std::size_t N>
std::optional<E> parse_name(const std::array<std::pair<E, std::string_view>, N>& names,
                            std::string_view s) {
  for (const auto& [value, name] : names) {
    if (name == s) return value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(ReplicaState s) {
  return name_of(kReplicaNames, s);
}
std::optional<ReplicaState> parse_replica_state(std::string_view s) {
  return parse_name(kReplicaNames, s);
}
std::string_view to_string(TransferState s) {
  return name_of(kTransferNames, s);
}
std::optional<TransferState> parse_transfer_state(std::string_view s) {
  return parse_name(kTransferNames, s);
}

std::string_view to_string(TransferPurpose p) {
  return name_of(kPurposeNames, p);
}
std::optional<TransferPurpose> parse_transfer_purpose(std::string_view s) {
  return parse_name(kPurposeNames, s);
}

}  // namespace orch
