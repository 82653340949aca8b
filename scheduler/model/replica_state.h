#pragma once
// The state of one copy (replica) of a checkpoint or dataset at one site, and of a transfer.
//
//   present  -> verified | corrupt | missing      (its manifest is checked at the site)
//   copying  -> verified | corrupt | missing      (a transfer is writing it, then it is checked)
//   verified -> missing | corrupt | deleted       (the audit, the resume check, retention)
//   corrupt, missing -> copying                   (re-replicated from a surviving copy)
//   present, verified -> refused                  (it resolves outside the directory it must
//                                                  lie in: a symbolic link out of it)
//
// Only a verified copy is ever resumed from or copied from. A refused copy is final: it is never
// listed, audited, copied from or to, or deleted again (issue 37, docs/data.md).

#include <optional>
#include <string>
#include <string_view>

namespace orch {

enum class ReplicaState { present, copying, verified, corrupt, missing, deleted, refused };

std::string_view to_string(ReplicaState s);
std::optional<ReplicaState> parse_replica_state(std::string_view s);

// queued -> running -> verifying -> done; running -> queued (a failure, retried after backoff);
// -> failed (out of tries, or its source is gone); -> cancelled.
enum class TransferState { queued, running, verifying, done, failed, cancelled };

std::string_view to_string(TransferState s);
std::optional<TransferState> parse_transfer_state(std::string_view s);
inline bool transfer_active(TransferState s) {
  return s == TransferState::queued || s == TransferState::running || s == TransferState::verifying;
}

// Why a transfer copies (issue 42: the transfers list groups by it and by job): a checkpoint
// copied by its job's replication policy, data a job needs where it is placed (a dataset, the
// checkpoint it resumes from, its code), or a copy a person asked for (`data replicate`).
enum class TransferPurpose { replication, staging, manual };

std::string_view to_string(TransferPurpose p);
std::optional<TransferPurpose> parse_transfer_purpose(std::string_view s);

}  // namespace orch
