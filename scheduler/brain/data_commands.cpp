// The data part's commands (issue 5): registering a dataset a person names, and replicating a
// dataset or a job's newest checkpoint to a site by hand. The registry itself is
// data_registry.cpp. Rules: docs/data.md.
#include <algorithm>
#include <cctype>

#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/data_keeper.h"
#include "scheduler/data/replication_plan.h"
#include "scheduler/data/staging.h"

namespace orch {
namespace {

using brain_text::base36;

// The name becomes a folder at every site: letters, digits, '-', '_', '.', and not only dots.
bool valid_dataset_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;  // as a job spec allows
  if (name.find_first_not_of('.') == std::string::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

// ---- data commands ---------------------------------------------------------------------------

Result<BrainReply> DataKeeper::on(const RegisterDataset& e) {
  if (!valid_dataset_name(e.name)) {
    return make_error(ErrorKind::invalid, "dataset name \"" + e.name +
                                              "\" must be 1 to 64 letters, digits, '-', '_' "
                                              "or '.', and not only dots");
  }
  const ClusterSpec* spec = cluster_spec(e.cluster);
  if (!spec) return make_error(ErrorKind::not_found, "no cluster " + e.cluster + " is configured");
  if (!lists_storage_at(spec)) {
    return make_error(ErrorKind::unsupported, "cluster " + e.cluster + " (provider " +
                                                  spec->provider + ") cannot hold datasets yet");
  }
  if (e.path.empty() || e.path.front() != '/') {
    return make_error(ErrorKind::invalid,
                      "the dataset's path must be absolute, got \"" + e.path + "\"");
  }
  const Millis now = clock_.now_ms();
  if (auto added = store_.insert_dataset({e.name, std::nullopt, 0, now}); !added) {
    return added.error();
  }
  auto copies = store_.replicas_of_dataset(e.name);
  if (!copies) return copies.error();
  ReplicaRow r;
  for (const auto& c : *copies) {
    if (c.cluster == e.cluster) r = c;
  }
  r.dataset = e.name;
  r.cluster = e.cluster;
  r.path = e.path;
  r.state = ReplicaState::present;
  r.detail = "registered by a person; being listed";
  r.updated_ms = now;
  if (r.id == 0) {
    auto id = store_.insert_replica(r);
    if (!id) return id.error();
    r.id = *id;
  } else if (auto s = store_.update_replica(r); !s) {
    return s.error();
  }
  if (auto s = request_manifest(r, ManifestPurpose::register_copy); !s) return s.error();
  if (auto s = store_.add_event(std::nullopt, std::nullopt, now, "dataset-registered",
                                "dataset " + e.name + " at " + e.cluster + ":" + e.path);
      !s) {
    return s.error();
  }
  BrainReply reply;
  reply.message = "dataset " + e.name + " registered at " + e.cluster + " (" + e.path +
                  "); it is verified once listed there";
  return reply;
}

Result<BrainReply> DataKeeper::on(const ReplicateData& e) {
  const ClusterSpec* to = cluster_spec(e.to);
  if (!to) return make_error(ErrorKind::not_found, "no cluster " + e.to + " is configured");
  if (!lists_storage_at(to)) {
    return make_error(ErrorKind::unsupported, "cluster " + e.to + " (provider " + to->provider +
                                                  ") cannot hold copies yet");
  }
  std::vector<ReplicaRow> copies;
  std::string name;
  std::string dst_path;
  std::int64_t bytes = 0;
  if (!e.dataset.empty()) {
    auto d = store_.dataset(e.dataset);
    if (!d) return d.error();
    if (!*d) return make_error(ErrorKind::not_found, "no dataset " + e.dataset);
    auto rs = store_.replicas_of_dataset(e.dataset);
    if (!rs) return rs.error();
    copies = std::move(*rs);
    name = "dataset " + e.dataset;
    dst_path = dataset_path(to->datasets_dir(), e.dataset);
    bytes = (*d)->bytes;
  } else {
    auto ckpts = store_.checkpoints_of(e.job_id);
    if (!ckpts) return ckpts.error();
    auto job = store_.job(e.job_id);
    if (!job) return job.error();
    if (!*job) return make_error(ErrorKind::not_found, "no job " + std::to_string(e.job_id));
    // The newest checkpoint with a verified copy.
    for (auto it = ckpts->rbegin(); it != ckpts->rend() && copies.empty(); ++it) {
      auto rs = store_.replicas_of_checkpoint(it->id);
      if (!rs) return rs.error();
      bool verified = std::any_of(rs->begin(), rs->end(), [](const ReplicaRow& r) {
        return r.state == ReplicaState::verified;
      });
      if (!verified) continue;
      copies = std::move(*rs);
      name =
          "checkpoint at step " + std::to_string(it->step) + " of job " + std::to_string(e.job_id);
      dst_path = replica_path(to->checkpoints_dir(), e.job_id, it->step, it->path);
      bytes = it->bytes.value_or(0);
    }
    if (copies.empty()) {
      return make_error(ErrorKind::conflict,
                        "job " + std::to_string(e.job_id) + " has no verified checkpoint yet");
    }
  }
  const ReplicaRow* source = nullptr;
  double best = -1;
  for (const auto& c : copies) {
    if (c.cluster == e.to && on_shared_storage(c) &&
        (c.state == ReplicaState::verified || c.state == ReplicaState::copying)) {
      BrainReply reply;
      reply.message = name + " is already " + std::string(to_string(c.state)) + " at " + e.to;
      return reply;
    }
    if (c.state != ReplicaState::verified || !on_shared_storage(c)) continue;
    auto bw = bandwidth_between(c.cluster, e.to);
    if (!bw) return bw.error();
    if (*bw > best) {
      best = *bw;
      source = &c;
    }
  }
  if (!source) {
    return make_error(ErrorKind::conflict, name + " has no verified copy to copy from");
  }
  auto id = start_transfer(*source, e.to, dst_path, "requested by a person", bytes);
  if (!id) return id.error();
  BrainReply reply;
  reply.transfer_id = *id;
  reply.message = "copying " + name + " from " + source->cluster + " to " + e.to + " (transfer " +
                  std::to_string(*id) + ")";
  return reply;
}

}  // namespace orch
