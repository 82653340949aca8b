// SchedulerBackend's checkpoint and data methods (issue 5): a job's checkpoints with their
// copies and datasets from the store; dataset registration, replication and the audit through
// the brain. Transfers are scheduler_backend_transfers.cpp.
#include <algorithm>
#include <map>

#include "web/backend/json_values.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using nlohmann::json;

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
