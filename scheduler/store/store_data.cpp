// Store: the checkpoint registry's copies, datasets and transfers (issue 5).
#include <limits>
#include <string>
#include <utility>

#include "scheduler/model/json_text.h"
#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {
namespace {

constexpr const char* kReplicaColumns =
    "id, checkpoint_id, dataset, cluster, path, state, detail, updated_ms, verified_ms, "
    "audited_ms, confined_to, node";

ReplicaRow read_replica(const Stmt& st) {
  ReplicaRow r;
  r.id = st.col_int(0);
  r.checkpoint_id = st.col_opt_int(1);
  r.dataset = st.col_text(2);
  r.cluster = st.col_text(3);
  r.path = st.col_text(4);
  r.state = parse_replica_state(st.col_text(5)).value_or(ReplicaState::missing);
  r.detail = st.col_text(6);
  r.updated_ms = st.col_int(7);
  r.verified_ms = st.col_opt_int(8);
  r.audited_ms = st.col_opt_int(9);
  r.confined_to = st.col_text(10);
  r.node = st.col_text(11);
  return r;
}

std::optional<nlohmann::json> read_json(const Stmt& st, int col) {
  if (st.is_null(col)) return std::nullopt;
  auto j = nlohmann::json::parse(st.col_text(col), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

DatasetRow read_dataset(const Stmt& st) {
  DatasetRow d;
  d.name = st.col_text(0);
  d.manifest = read_json(st, 1);
  d.bytes = st.col_int(2);
  d.created_ms = st.col_int(3);
  return d;
}

constexpr const char* kTransferColumns =
    "id, checkpoint_id, dataset, replica_id, src_cluster, src_path, dst_cluster, dst_path, "
    "directory, state, why, bytes_total, bytes_done, rate_bps, cap_bps, base_cap_bps, "
    "cap_changed_ms, tries, next_try_ms, error, route, copy_seconds, copied_bytes, created_ms, "
    "started_ms, ended_ms, updated_ms, purpose, job_id";

TransferRow read_transfer(const Stmt& st) {
  TransferRow t;
  t.id = st.col_int(0);
  t.checkpoint_id = st.col_opt_int(1);
  t.dataset = st.col_text(2);
  t.replica_id = st.col_int(3);
  t.src_cluster = st.col_text(4);
  t.src_path = st.col_text(5);
  t.dst_cluster = st.col_text(6);
  t.dst_path = st.col_text(7);
  t.directory = st.col_int(8) != 0;
  t.state = parse_transfer_state(st.col_text(9)).value_or(TransferState::failed);
  t.why = st.col_text(10);
  t.bytes_total = st.col_int(11);
  t.bytes_done = st.col_int(12);
  t.rate_bps = st.col_double(13);
  t.cap_bps = st.col_double(14);
  t.base_cap_bps = st.col_double(15);
  t.cap_changed_ms = st.col_opt_int(16);
  t.tries = static_cast<int>(st.col_int(17));
  t.next_try_ms = st.col_opt_int(18);
  t.error = st.col_text(19);
  t.route = st.col_text(20);
  t.copy_seconds = st.col_double(21);
  t.copied_bytes = st.col_int(22);
  t.created_ms = st.col_int(23);
  t.started_ms = st.col_opt_int(24);
  t.ended_ms = st.col_opt_int(25);
  t.updated_ms = st.col_int(26);
  t.purpose = parse_transfer_purpose(st.col_text(27)).value_or(TransferPurpose::replication);
  t.job_id = st.col_opt_int(28);
  return t;
}

std::optional<std::string> opt_text(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

}  // namespace

Result<std::int64_t> Store::insert_replica(const ReplicaRow& r) {
  if (auto ok = execute(
          db_,
          "INSERT INTO replicas(checkpoint_id, dataset, cluster, path, state, detail, "
          "updated_ms, verified_ms, audited_ms, confined_to, node) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          r.checkpoint_id, opt_text(r.dataset), r.cluster, r.path, std::string(to_string(r.state)),
          r.detail, r.updated_ms, r.verified_ms, r.audited_ms, r.confined_to, r.node);
      !ok) {
    return ok.error();
  }
  return db_.last_insert_id();
}

Result<void> Store::update_replica(const ReplicaRow& r) {
  return execute(db_,
                 "UPDATE replicas SET path = ?, state = ?, detail = ?, updated_ms = ?, "
                 "verified_ms = ?, audited_ms = ?, confined_to = ? WHERE id = ?",
                 r.path, std::string(to_string(r.state)), r.detail, r.updated_ms, r.verified_ms,
                 r.audited_ms, r.confined_to, r.id);
}

Result<int> Store::lose_node_copies(const std::string& cluster, const std::string& node,
                                    const std::string& detail, Millis now) {
  if (auto r = execute(db_,
                       "UPDATE replicas SET state = 'missing', detail = ?, updated_ms = ? "
                       "WHERE cluster = ? AND node = ? AND node <> '' "
                       "AND state IN ('present', 'verified', 'copying')",
                       detail, now, cluster, node);
      !r) {
    return r.error();
  }
  return db_.changes();
}

Result<std::optional<ReplicaRow>> StoreReader::replica(std::int64_t id) {
  return query_one(db_, std::string("SELECT ") + kReplicaColumns + " FROM replicas WHERE id = ?",
                   read_replica, id);
}

Result<std::vector<ReplicaRow>> StoreReader::replicas_of_checkpoint(std::int64_t checkpoint_id) {
  return query(db_,
               std::string("SELECT ") + kReplicaColumns +
                   " FROM replicas WHERE checkpoint_id = ? ORDER BY cluster",
               read_replica, checkpoint_id);
}

Result<std::vector<ReplicaRow>> StoreReader::replicas_of_dataset(const std::string& dataset) {
  return query(db_,
               std::string("SELECT ") + kReplicaColumns +
                   " FROM replicas WHERE dataset = ? ORDER BY cluster",
               read_replica, dataset);
}

Result<std::vector<ReplicaRow>> StoreReader::replicas_of_job(JobId job) {
  return query(db_,
               std::string("SELECT ") + kReplicaColumns +
                   " FROM replicas WHERE checkpoint_id IN "
                   "(SELECT id FROM checkpoints WHERE job_id = ?) ORDER BY checkpoint_id, cluster",
               read_replica, job);
}

Result<std::vector<ReplicaRow>> StoreReader::replicas_of_checkpoints_with_copies(JobId job) {
  static const std::string sql = std::string("SELECT ") + kReplicaColumns +
                                 " FROM replicas WHERE checkpoint_id IN (" +
                                 kCheckpointsWithCopies + ") ORDER BY checkpoint_id, cluster";
  return query(db_, sql, read_replica, job);
}

Result<std::vector<ReplicaRow>> StoreReader::live_replicas(const std::string& cluster) {
  // Through the index of copies not deleted: retention deletes almost every copy ever made.
  if (cluster.empty()) {
    return query(db_,
                 std::string("SELECT ") + kReplicaColumns +
                     " FROM replicas INDEXED BY replicas_not_deleted WHERE state <> 'deleted' "
                     "ORDER BY id",
                 read_replica);
  }
  return query(db_,
               std::string("SELECT ") + kReplicaColumns +
                   " FROM replicas INDEXED BY replicas_not_deleted WHERE cluster = ? AND "
                   "state <> 'deleted' ORDER BY id",
               read_replica, cluster);
}

Result<bool> Store::insert_dataset(const DatasetRow& d) {
  std::optional<std::string> manifest;
  if (d.manifest) manifest = d.manifest->dump();
  if (auto ok = execute(db_,
                        "INSERT OR IGNORE INTO datasets(name, manifest, bytes, created_ms) "
                        "VALUES (?, ?, ?, ?)",
                        d.name, manifest, d.bytes, d.created_ms);
      !ok) {
    return ok.error();
  }
  return db_.changes() > 0;
}

Result<std::optional<DatasetRow>> StoreReader::dataset(const std::string& name) {
  return query_one(db_, "SELECT name, manifest, bytes, created_ms FROM datasets WHERE name = ?",
                   read_dataset, name);
}

Result<std::vector<DatasetRow>> StoreReader::datasets() {
  return query(db_, "SELECT name, manifest, bytes, created_ms FROM datasets ORDER BY name",
               read_dataset);
}

Result<void> Store::set_dataset_manifest(const std::string& name, const nlohmann::json& manifest,
                                         std::int64_t bytes) {
  return execute(db_, "UPDATE datasets SET manifest = ?, bytes = ? WHERE name = ?",
                 json_text(manifest), bytes, name);
}

Result<std::int64_t> Store::insert_transfer(const TransferRow& t) {
  ++work_epoch_;
  ++transfers_epoch_;
  if (auto ok = execute(
          db_,
          "INSERT INTO transfers(checkpoint_id, dataset, replica_id, src_cluster, src_path, "
          "dst_cluster, dst_path, directory, state, why, bytes_total, cap_bps, base_cap_bps, "
          "next_try_ms, created_ms, updated_ms, purpose, job_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
          "?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          t.checkpoint_id, opt_text(t.dataset), t.replica_id, t.src_cluster, t.src_path,
          t.dst_cluster, t.dst_path, t.directory ? 1 : 0, std::string(to_string(t.state)), t.why,
          t.bytes_total, t.cap_bps, t.base_cap_bps, t.next_try_ms, t.created_ms, t.created_ms,
          std::string(to_string(t.purpose)), t.job_id);
      !ok) {
    return ok.error();
  }
  return db_.last_insert_id();
}

Result<void> Store::update_transfer(const TransferRow& t) {
  ++work_epoch_;
  ++transfers_epoch_;
  return execute(db_,
                 "UPDATE transfers SET src_cluster = ?, src_path = ?, state = ?, bytes_total = ?, "
                 "bytes_done = ?, rate_bps = ?, cap_bps = ?, base_cap_bps = ?, cap_changed_ms = ?, "
                 "tries = ?, next_try_ms = ?, error = ?, route = ?, copy_seconds = ?, "
                 "copied_bytes = ?, started_ms = ?, ended_ms = ?, updated_ms = ?, why = ? "
                 "WHERE id = ?",
                 t.src_cluster, t.src_path, std::string(to_string(t.state)), t.bytes_total,
                 t.bytes_done, t.rate_bps, t.cap_bps, t.base_cap_bps, t.cap_changed_ms, t.tries,
                 t.next_try_ms, t.error, t.route, t.copy_seconds, t.copied_bytes, t.started_ms,
                 t.ended_ms, t.updated_ms, t.why, t.id);
}

Result<std::optional<TransferRow>> StoreReader::transfer(std::int64_t id) {
  return query_one(db_, std::string("SELECT ") + kTransferColumns + " FROM transfers WHERE id = ?",
                   read_transfer, id);
}

Result<std::vector<TransferRow>> StoreReader::transfers(bool active_only, int limit) {
  // Two statements rather than one with "? = 0 OR state IN ...": that OR keeps SQLite off the
  // state index, and the active few would be found by walking every finished transfer.
  if (active_only) {
    return query(db_,
                 std::string("SELECT ") + kTransferColumns +
                     " FROM transfers WHERE state IN ('queued', 'running', 'verifying') "
                     "ORDER BY id DESC LIMIT ?",
                 read_transfer, limit);
  }
  return query(
      db_, std::string("SELECT ") + kTransferColumns + " FROM transfers ORDER BY id DESC LIMIT ?",
      read_transfer, limit);
}

Result<std::vector<TransferRow>> StoreReader::transfer_page(bool all,
                                                            std::optional<std::int64_t> before_id,
                                                            int limit) {
  const std::int64_t before = before_id.value_or(std::numeric_limits<std::int64_t>::max());
  if (all) {
    return query(db_,
                 std::string("SELECT ") + kTransferColumns +
                     " FROM transfers WHERE id < ? ORDER BY id DESC LIMIT ?",
                 read_transfer, before, limit);
  }
  // The partial index holds the shown ones in id order: the walk stops after `limit` of them.
  return query(db_,
               std::string("SELECT ") + kTransferColumns +
                   " FROM transfers INDEXED BY transfers_shown WHERE state IN ('queued', "
                   "'running', 'verifying', 'failed') AND id < ? ORDER BY id DESC LIMIT ?",
               read_transfer, before, limit);
}

Result<std::vector<std::pair<std::int64_t, std::int64_t>>> StoreReader::transfer_minutes(
    std::int64_t from_minute) {
  auto read = [](const Stmt& st) { return std::make_pair(st.col_int(0), st.col_int(1)); };
  return query(db_, "SELECT minute, bytes FROM transfer_minutes WHERE minute >= ? ORDER BY minute",
               read, from_minute);
}

Result<std::vector<TransferRow>> StoreReader::transfers_from_to(const std::string& src_cluster,
                                                                const std::string& dst_cluster,
                                                                const std::string& dst_path,
                                                                int limit) {
  return query(db_,
               std::string("SELECT ") + kTransferColumns +
                   " FROM transfers WHERE src_cluster = ? AND dst_cluster = ? AND dst_path = ? "
                   "ORDER BY id DESC LIMIT ?",
               read_transfer, src_cluster, dst_cluster, dst_path, limit);
}

Result<std::vector<TransferRow>> StoreReader::transfers_from(const std::string& src_cluster,
                                                             int limit) {
  return query(db_,
               std::string("SELECT ") + kTransferColumns +
                   " FROM transfers WHERE src_cluster = ? ORDER BY id DESC LIMIT ?",
               read_transfer, src_cluster, limit);
}

Result<std::vector<TransferRow>> StoreReader::done_transfers(const std::string& a,
                                                             const std::string& b, int limit) {
  return query(db_,
               // Each direction the newest `limit` by the transfers_done index, then the two
               // merged: the cost is the limit's, not the history's (an OR of the two pairs
               // would scan every done transfer to sort them).
               std::string("SELECT * FROM (SELECT ") + kTransferColumns +
                   " FROM transfers INDEXED BY transfers_done WHERE state = 'done' AND "
                   "src_cluster = ?1 AND dst_cluster = ?2 ORDER BY id DESC LIMIT ?3) UNION ALL "
                   "SELECT * FROM (SELECT " +
                   kTransferColumns +
                   " FROM transfers INDEXED BY transfers_done WHERE state = 'done' AND "
                   "src_cluster = ?2 AND dst_cluster = ?1 ORDER BY id DESC LIMIT ?3) "
                   "ORDER BY 1 DESC LIMIT ?3",
               read_transfer, a, b, limit);
}

Result<std::optional<OutboxRow>> StoreReader::action(std::int64_t id) {
  auto read = [](const Stmt& s) {
    OutboxRow o;
    o.id = s.col_int(0);
    o.cluster = s.col_text(1);
    o.kind = parse_action_kind(s.col_text(2)).value_or(ActionKind::launch);
    o.token = s.col_text(3);
    o.payload = nlohmann::json::parse(s.col_text(4), nullptr, false);
    o.created_ms = s.col_int(5);
    o.done_ms = s.col_opt_int(6);
    return o;
  };
  return query_one(db_,
                   "SELECT id, cluster, kind, token, payload, created_ms, done_ms FROM outbox "
                   "WHERE id = ?",
                   read, id);
}

std::string_view to_string(ActionKind k) {
  switch (k) {
    case ActionKind::launch:
      return "launch";
    case ActionKind::cancel:
      return "cancel";
    case ActionKind::probe:
      return "probe";
    case ActionKind::manifest:
      return "manifest";
    case ActionKind::remove:
      return "remove";
    case ActionKind::signal:
      return "signal";
  }
  return "launch";
}

std::optional<ActionKind> parse_action_kind(std::string_view s) {
  for (ActionKind k : {ActionKind::launch, ActionKind::cancel, ActionKind::probe,
                       ActionKind::manifest, ActionKind::remove, ActionKind::signal}) {
    if (to_string(k) == s) return k;
  }
  return std::nullopt;
}

}  // namespace orch
