// The data registry (issue 5): what is recorded about each copy of a checkpoint or dataset. A
// checkpoint a job reports gets a copy row at the site that saved it and a listing there; a
// dataset a person registers likewise. It answers where a copy must lie (its confinement), whose
// it is, its registered manifest, and asks a site to list a copy. Tiers are data_tiers.cpp; what
// a listing says is the verifier's (data_verifier.cpp); copies between sites are the transfers'
// (data_transfers.cpp). Rules: docs/data.md.
#include <algorithm>
#include <cctype>

#include "scheduler/brain/brain_text.h"
#include "scheduler/brain/data_registry.h"
#include "scheduler/model/checkpoint_dir.h"

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

// ---- registering a checkpoint ----------------------------------------------------------------

Result<void> DataRegistry::register_checkpoint(const AttemptRow& a, std::int64_t checkpoint_id,
                                               const std::string& path, const std::string& node) {
  const Millis now = clock_.now_ms();
  ReplicaRow r;
  r.checkpoint_id = checkpoint_id;
  r.cluster = a.cluster;
  r.path = path;
  r.node = node;
  if (node.empty()) {
    r.confined_to = checkpoint_dir_of(a);
  } else {
    CheckpointReport local;
    local.tier = CheckpointTier::local;
    local.node = node;
    auto dir = tier_dir(a, local);
    if (!dir) return dir.error();
    r.confined_to = *dir;
  }
  r.state = ReplicaState::present;
  r.updated_ms = now;
  const bool can_list = lists_storage_at(cluster_spec(a.cluster));
  r.detail = can_list ? "reported by attempt " + std::to_string(a.no) + "; being listed"
                      : "reported by attempt " + std::to_string(a.no) +
                            "; this provider cannot list storage, so it is not verified";
  auto id = store_.insert_replica(r);
  if (!id) return id.error();
  r.id = *id;
  if (!can_list) return Ok{};
  return request_manifest(r, ManifestPurpose::register_copy);
}

std::string DataRegistry::checkpoint_dir_of(const AttemptRow& a) {
  if (!a.checkpoint_dir.empty()) return a.checkpoint_dir;
  const ClusterSpec* spec = cluster_spec(a.cluster);
  return spec ? job_checkpoint_dir(spec->checkpoints_dir(), a.job_id) : std::string();
}

Result<std::string> DataRegistry::confinement_of(const ReplicaRow& r) {
  if (!r.confined_to.empty() || !r.checkpoint_id) return r.confined_to;
  auto job = job_of(r);
  if (!job) return job.error();
  const ClusterSpec* spec = cluster_spec(r.cluster);
  if (!*job || !spec) return std::string();
  const std::string replicas = job_replica_dir(spec->checkpoints_dir(), **job);
  auto normal = normal_absolute_path(r.path);
  if (normal && strictly_inside(*normal, replicas)) return replicas;
  return job_checkpoint_dir(spec->checkpoints_dir(), **job);
}

Result<void> DataRegistry::request_manifest(const ReplicaRow& replica, ManifestPurpose purpose,
                                            std::optional<std::int64_t> transfer_id,
                                            const std::vector<std::string>& hash_files,
                                            ManifestRequest::Hash hash) {
  const Millis now = clock_.now_ms();
  auto within = confinement_of(replica);
  if (!within) return within.error();
  // A checkpoint's copy at a cluster no longer configured: no directory to confine it to, and
  // no worker to list it.
  if (replica.checkpoint_id && within->empty()) return Ok{};
  OutboxRow row;
  row.cluster = replica.cluster;
  row.kind = ActionKind::manifest;
  row.token = std::string(to_string(purpose)) + "-" + std::to_string(replica.id) + "-" +
              base36(static_cast<std::uint64_t>(now));
  row.payload = {{"purpose", to_string(purpose)},
                 {"replica_id", replica.id},
                 {"path", replica.path},
                 {"hash", to_string(hash_files.empty() ? hash : ManifestRequest::Hash::listed)},
                 {"hash_files", hash_files}};
  // A checkpoint's copy is listed only inside its directory (a dataset is not confined).
  if (!within->empty()) row.payload["within"] = *within;
  if (transfer_id) row.payload["transfer_id"] = *transfer_id;
  row.created_ms = now;
  if (auto r = store_.enqueue(row); !r) return r.error();
  return Ok{};
}

Result<std::optional<Manifest>> DataRegistry::registered_manifest(const ReplicaRow& replica) {
  std::optional<nlohmann::json> j;
  if (replica.checkpoint_id) {
    auto c = store_.checkpoint(*replica.checkpoint_id);
    if (!c) return c.error();
    if (*c) j = (*c)->manifest;
  } else {
    auto d = store_.dataset(replica.dataset);
    if (!d) return d.error();
    if (*d) j = (*d)->manifest;
  }
  if (!j) return std::optional<Manifest>{};
  auto m = manifest_from_json(*j);
  if (!m) return m.error();
  return std::optional<Manifest>{std::move(*m)};
}

Result<std::string> DataRegistry::object_name(const ReplicaRow& replica) {
  if (!replica.checkpoint_id) return "dataset " + replica.dataset;
  auto c = store_.checkpoint(*replica.checkpoint_id);
  if (!c) return c.error();
  if (!*c) return "checkpoint " + std::to_string(*replica.checkpoint_id);
  return "checkpoint at step " + std::to_string((*c)->step) + " of job " +
         std::to_string((*c)->job_id);
}

Result<std::optional<JobId>> DataRegistry::job_of(const ReplicaRow& replica) {
  if (!replica.checkpoint_id) return std::optional<JobId>{};
  auto c = store_.checkpoint(*replica.checkpoint_id);
  if (!c) return c.error();
  if (!*c) return std::optional<JobId>{};
  return std::optional<JobId>{(*c)->job_id};
}

// The first listing of a copy that was found at a site (a job's new checkpoint, a dataset a
// ---- data commands ---------------------------------------------------------------------------

Result<BrainReply> DataRegistry::on(const RegisterDataset& e) {
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

}  // namespace orch
