// SchedulerBackend's checkpoint and data methods (issue 5): a job's checkpoints with their
// copies, datasets, transfers from the store; dataset registration, replication and the audit
// through the brain.
#include <algorithm>
#include <cmath>
#include <map>

#include "web/backend/json_values.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

// Bytes per second as MB/s (10^6 bytes), two decimals; null for 0 (none, or not measured).
json mb_s(double bps) {
  if (bps <= 0) return nullptr;
  return std::round(bps / 1e4) / 100.0;
}

json replica_json(const ReplicaRow& r) {
  // tier: "node" for a copy on one node's own disk (node names it), "site" for the site's
  // shared storage (tiered checkpoints, issue 38).
  return {{"id", r.id},
          {"cluster", r.cluster},
          {"tier", r.node.empty() ? "site" : "node"},
          {"node", r.node.empty() ? json(nullptr) : json(r.node)},
          {"path", r.path},
          {"state", std::string(to_string(r.state))},
          {"detail", r.detail},
          {"updated_ms", r.updated_ms},
          {"verified_ms", opt(r.verified_ms)},
          {"audited_ms", opt(r.audited_ms)}};
}

// The number of files in a manifest, or null while none is known.
json manifest_files(const std::optional<json>& manifest) {
  if (!manifest || !manifest->is_object()) return nullptr;
  auto it = manifest->find("files");
  if (it == manifest->end() || !it->is_array()) return nullptr;
  return it->size();
}

json checkpoint_json(const CheckpointRow& c, const std::vector<ReplicaRow>& replicas) {
  json copies = json::array();
  bool verified = false;
  for (const auto& r : replicas) {
    verified = verified || r.state == ReplicaState::verified;
    copies.push_back(replica_json(r));
  }
  return {{"id", c.id},           {"step", c.step},        {"path", c.path},
          {"cluster", c.cluster}, {"bytes", opt(c.bytes)}, {"save_time_s", opt(c.save_time_s)},
          {"at_ms", c.at_ms},     {"verified", verified},  {"files", manifest_files(c.manifest)},
          {"replicas", copies}};
}

// "checkpoint 12 of job 3 (step 40)", "dataset imagenet" or "code <hash> for job 7"; the
// checkpoints read so far are kept in seen (a list of transfers names the same few again and
// again).
Result<std::string> transfer_what(StoreReader& store, const TransferRow& t,
                                  std::map<std::int64_t, std::optional<CheckpointRow>>& seen) {
  // A job's code (issue 40): "code 1a2b3c4d5e6f for job 7", its transfer's reason.
  if (!t.checkpoint_id && t.dataset.empty()) return t.why.empty() ? std::string("code") : t.why;
  if (!t.checkpoint_id) return "dataset " + t.dataset;
  auto it = seen.find(*t.checkpoint_id);
  if (it == seen.end()) {
    auto row = store.checkpoint(*t.checkpoint_id);
    if (!row) return row.error();
    it = seen.emplace(*t.checkpoint_id, std::move(*row)).first;
  }
  std::string what = "checkpoint " + std::to_string(*t.checkpoint_id);
  if (it->second) {
    what += " of job " + std::to_string(it->second->job_id) + " (step " +
            std::to_string(it->second->step) + ")";
  }
  return what;
}

json transfer_json(const TransferRow& t, const std::string& what) {
  json percent = nullptr;
  if (t.state == TransferState::done || t.state == TransferState::verifying) {
    percent = 100.0;  // copied (verifying: being checked at the destination)
  } else if (t.bytes_total > 0) {
    const double p = 100.0 * static_cast<double>(t.bytes_done) / static_cast<double>(t.bytes_total);
    percent = std::round(std::clamp(p, 0.0, 100.0) * 10) / 10.0;
  }
  return {{"id", t.id},
          {"what", what},
          {"checkpoint", opt(t.checkpoint_id)},
          {"dataset", t.dataset.empty() ? json(nullptr) : json(t.dataset)},
          {"from", {{"cluster", t.src_cluster}, {"path", t.src_path}}},
          {"to", {{"cluster", t.dst_cluster}, {"path", t.dst_path}}},
          {"state", std::string(to_string(t.state))},
          {"why", t.why},
          {"bytes_total", t.bytes_total},
          {"bytes_done", t.bytes_done},
          {"percent", percent},
          {"rate_mb_s", t.state == TransferState::running ? mb_s(t.rate_bps) : json(nullptr)},
          {"cap_mb_s", mb_s(t.cap_bps)},
          {"base_cap_mb_s", mb_s(t.base_cap_bps)},
          {"tries", t.tries},
          {"error", t.error},
          {"route", t.route},
          {"created_ms", t.created_ms},
          {"started_ms", opt(t.started_ms)},
          {"ended_ms", opt(t.ended_ms)},
          {"next_try_ms", opt(t.next_try_ms)}};
}

// The brain's words, or ours when it gave none.
std::string message_or(const BrainReply& reply, const std::string& fallback) {
  return reply.message.empty() ? fallback : reply.message;
}

}  // namespace

std::optional<Error> SchedulerBackend::check_configured(const std::string& cluster) const {
  if (spec_of(cluster)) return std::nullopt;
  std::string names;
  for (const auto& name : clusters_.names()) names += (names.empty() ? "" : ", ") + name;
  return make_error(ErrorKind::invalid, "no cluster named \"" + cluster +
                                            "\"; configured: " + (names.empty() ? "none" : names));
}

Result<nlohmann::json> SchedulerBackend::job_checkpoints(std::int64_t id) {
  auto lease = job_reader(id);
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto checkpoints = reader.checkpoints_of(id);
  if (!checkpoints) return checkpoints.error();
  auto replicas = reader.replicas_of_job(id);
  if (!replicas) return replicas.error();
  std::map<std::int64_t, std::vector<ReplicaRow>> copies;
  for (auto& r : *replicas) {
    if (r.checkpoint_id) copies[*r.checkpoint_id].push_back(std::move(r));
  }
  // Oldest first from the store; newest first here.
  std::vector<const CheckpointRow*> rows;
  for (const auto& c : *checkpoints) rows.push_back(&c);
  std::stable_sort(rows.begin(), rows.end(), [](const CheckpointRow* a, const CheckpointRow* b) {
    return a->step != b->step ? a->step > b->step : a->id > b->id;
  });
  json out = json::array();
  for (const CheckpointRow* c : rows) out.push_back(checkpoint_json(*c, copies[c->id]));
  return json{{"job", id}, {"checkpoints", out}};
}

Result<nlohmann::json> SchedulerBackend::list_datasets() {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto datasets = reader.datasets();
  if (!datasets) return datasets.error();
  json out = json::array();
  for (const auto& d : *datasets) {
    auto replicas = reader.replicas_of_dataset(d.name);
    if (!replicas) return replicas.error();
    json copies = json::array();
    for (const auto& r : *replicas) copies.push_back(replica_json(r));
    out.push_back({{"name", d.name},
                   {"bytes", d.manifest ? json(d.bytes) : json(nullptr)},
                   {"files", manifest_files(d.manifest)},
                   {"created_ms", d.created_ms},
                   {"replicas", copies}});
  }
  return json{{"datasets", out}};
}

Result<nlohmann::json> SchedulerBackend::register_dataset(const std::string& name,
                                                          const std::string& cluster,
                                                          const std::string& path) {
  if (auto bad = check_configured(cluster)) return *bad;
  // A name already registered gets one more copy (the brain's rule), so no check here.
  auto reply = loop_.call(RegisterDataset{name, cluster, path});
  if (!reply) return reply.error();
  return json{{"name", name},
              {"message", message_or(*reply, "dataset " + name + " registered at " + cluster + ":" +
                                                 path + "; its manifest is computed there")}};
}

Result<nlohmann::json> SchedulerBackend::replicate_data(const ReplicateRequest& request) {
  if ((request.job_id > 0) == !request.dataset.empty()) {
    return make_error(ErrorKind::invalid, "give either a dataset or a job to replicate");
  }
  if (auto bad = check_configured(request.to)) return *bad;
  {
    auto lease = readers_->lease();
    if (!lease) return lease.error();
    StoreReader& reader = **lease;
    if (request.job_id > 0) {
      if (auto j = find_job(reader, request.job_id); !j) return j.error();
    } else {
      auto known = reader.dataset(request.dataset);
      if (!known) return known.error();
      if (!*known) {
        return make_error(ErrorKind::not_found, "no dataset named \"" + request.dataset + "\"");
      }
    }
  }
  auto reply = loop_.call(ReplicateData{request.dataset, request.job_id, request.to});
  if (!reply) return reply.error();
  const std::string what =
      request.job_id > 0 ? "job " + std::to_string(request.job_id) + "'s newest verified checkpoint"
                         : "dataset " + request.dataset;
  std::string fallback = reply->transfer_id > 0
                             ? "copying " + what + " to " + request.to + " (transfer " +
                                   std::to_string(reply->transfer_id) + ")"
                             : what + " needs no copy to " + request.to;
  return json{{"transfer", reply->transfer_id > 0 ? json(reply->transfer_id) : json(nullptr)},
              {"message", message_or(*reply, std::move(fallback))}};
}

Result<nlohmann::json> SchedulerBackend::list_transfers(const TransferFilter& filter) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto rows = reader.transfers(!filter.all, filter.limit);
  if (!rows) return rows.error();
  std::map<std::int64_t, std::optional<CheckpointRow>> seen;
  json out = json::array();
  for (const auto& t : *rows) {
    auto what = transfer_what(reader, t, seen);
    if (!what) return what.error();
    out.push_back(transfer_json(t, *what));
  }
  return json{{"transfers", out}};
}

Result<nlohmann::json> SchedulerBackend::get_transfer(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto row = reader.transfer(id);
  if (!row) return row.error();
  if (!*row) return make_error(ErrorKind::not_found, "no transfer with id " + std::to_string(id));
  std::map<std::int64_t, std::optional<CheckpointRow>> seen;
  auto what = transfer_what(reader, **row, seen);
  if (!what) return what.error();
  return transfer_json(**row, *what);
}

Result<nlohmann::json> SchedulerBackend::start_audit(const std::string& cluster) {
  if (!cluster.empty()) {
    if (auto bad = check_configured(cluster)) return *bad;
  }
  auto reply = loop_.call(StartAudit{cluster});
  if (!reply) return reply.error();
  return json{
      {"message", message_or(*reply, cluster.empty() ? "auditing every copy at every cluster"
                                                     : "auditing every copy at " + cluster)}};
}

}  // namespace orch
