// Old code at the sites (issue 40; code_to_prune in scheduler/data/code_staging.h): now and then
// the trees and archives no live job names and no job that ended within the retention window
// used are removed at their sites (remove actions, confined to <storage_root>/code), and their
// transfer is marked cancelled ("pruned"), so a later job with that code sends it again.
#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/data_transfers.h"
#include "scheduler/data/code_staging.h"
#include "scheduler/model/workdir.h"

namespace orch {
namespace {

constexpr Millis kCodeSweepEveryMs = 3600LL * 1000;
constexpr Millis kCodeKeepMs = 7LL * 24 * 3600 * 1000;

// The code hash a staged archive's path names (<root>/code/<sha256>.tar), or "".
std::string hash_of(const std::string& archive) {
  const std::size_t slash = archive.rfind('/');
  const std::string name = archive.substr(slash == std::string::npos ? 0 : slash + 1);
  if (name.size() != 68 || !name.ends_with(".tar")) return "";
  const std::string hash = name.substr(0, 64);
  return is_code_sha256(hash) ? hash : "";
}

}  // namespace

Result<std::vector<CodeUse>> DataTransfers::code_uses() {
  std::vector<CodeUse> uses;
  for (JobState s : kAllJobStates) {
    auto jobs = is_terminal(s) ? store_.jobs(s, 10000) : store_.jobs_in_states({s});
    if (!jobs) return jobs.error();
    for (const JobRow& j : *jobs) {
      if (j.spec.workdir.sha256.empty()) continue;
      CodeUse u;
      u.sha256 = j.spec.workdir.sha256;
      u.live = !is_terminal(s);
      if (is_terminal(s)) u.ended_ms = j.updated_ms;
      uses.push_back(std::move(u));
    }
  }
  return uses;
}

Result<void> DataTransfers::sweep_code() {
  const Millis now = clock_.now_ms();
  if (last_code_sweep_ms_ != 0 && now - last_code_sweep_ms_ < kCodeSweepEveryMs) return Ok{};
  last_code_sweep_ms_ = now;
  auto copies = store_.transfers_from(std::string(kCodeStoreSite), 10000);
  if (!copies) return copies.error();
  std::vector<CodeCopyHeld> held;
  for (const TransferRow& t : *copies) {
    const std::string hash = hash_of(t.dst_path);
    if (t.state != TransferState::done || hash.empty()) continue;
    held.push_back({hash, t.dst_cluster, t.ended_ms.value_or(t.updated_ms)});
  }
  if (held.empty()) return Ok{};
  auto uses = code_uses();
  if (!uses) return uses.error();
  for (const CodeCopyHeld& c : code_to_prune(held, *uses, now, kCodeKeepMs)) {
    for (TransferRow t : *copies) {
      if (t.state != TransferState::done || t.dst_cluster != c.cluster ||
          hash_of(t.dst_path) != c.sha256) {
        continue;
      }
      if (auto r = prune_code_copy(t); !r) return r;
    }
  }
  return Ok{};
}

Result<void> DataTransfers::prune_code_copy(TransferRow t) {
  const ClusterSpec* spec = cluster_spec(t.dst_cluster);
  const Millis now = clock_.now_ms();
  t.state = TransferState::cancelled;
  t.error = "pruned: no job used this code for 7 days";
  t.updated_ms = now;
  if (auto r = store_.update_transfer(t); !r) return r;
  if (spec == nullptr) return Ok{};  // no longer configured: nothing to ask
  const std::string hash = hash_of(t.dst_path);
  for (const std::string& path :
       {code_tree_path(spec->storage_root, hash), code_archive_path(spec->storage_root, hash)}) {
    OutboxRow row;
    row.cluster = t.dst_cluster;
    row.kind = ActionKind::remove;
    row.token = "remove-code-" + hash.substr(0, 12) + "-" +
                brain_text::base36(static_cast<std::uint64_t>(now)) +
                (path.ends_with(".tar") ? "-a" : "-t");
    row.payload = {{"path", path}, {"within", code_dir(spec->storage_root)}};
    row.created_ms = now;
    if (auto s = store_.enqueue(row); !s) return s.error();
  }
  return store_.add_event(std::nullopt, std::nullopt, now, "code-pruned",
                          "code " + hash.substr(0, 12) + " removed at " + t.dst_cluster +
                              ": no live job names it and none used it for 7 days");
}

}  // namespace orch
