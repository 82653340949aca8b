// The job's code at a site (issue 40, item 1; scheduler/data/code_staging.h): DataStager's
// part of stage_for that sends the workdir archive from the server's code store, once per
// hash and site, as a transfer the transfer worker carries out like any other.
#include "scheduler/brain/data_stager.h"
#include "scheduler/data/code_staging.h"
#include "scheduler/model/workdir.h"

namespace orch {

Result<void> DataStager::stage_code(const JobRow& job, const std::string& cluster,
                                    std::vector<std::string>& waits) {
  const WorkdirSpec& code = job.spec.workdir;
  if (code.sha256.empty()) return Ok{};
  const ClusterSpec* spec = cluster_spec(cluster);
  if (spec == nullptr) return Ok{};
  const std::string short_hash = code.sha256.substr(0, 12);
  if (!is_code_sha256(code.sha256)) {
    waits.push_back("its code (workdir " + short_hash + ") cannot be staged to " + cluster +
                    ": not a SHA-256");
    return Ok{};
  }
  if (auto refused = code_route_refusal(*spec)) {
    waits.push_back(*refused + " (workdir " + short_hash + ")");
    return Ok{};
  }
  const std::string dst = code_archive_path(spec->storage_root, code.sha256);
  auto newest = store_.transfers_from_to(std::string(kCodeStoreSite), cluster, dst, 1);
  if (!newest) return newest.error();
  std::optional<CodeCopy> copy;
  if (!newest->empty())
    copy = CodeCopy{newest->front().id, newest->front().state, newest->front().error};
  const CodeStep step = next_code_step(copy);
  if (step == CodeStep::ready) return Ok{};
  std::int64_t id = copy ? copy->id : 0;
  if (step == CodeStep::start) {
    TransferRow t;
    t.src_cluster = std::string(kCodeStoreSite);
    t.src_path = code_store_path(code.sha256);
    t.dst_cluster = cluster;
    t.dst_path = dst;
    t.state = TransferState::queued;
    t.why = "code " + short_hash + " for job " + std::to_string(job.id);
    t.purpose = TransferPurpose::staging;
    t.job_id = job.id;
    t.bytes_total = code.bytes;
    t.base_cap_bps = spec->data.bwlimit_mb_s > 0 ? spec->data.bwlimit_mb_s * 1e6 : 0.0;
    t.cap_bps = t.base_cap_bps;
    t.created_ms = clock_.now_ms();
    auto inserted = store_.insert_transfer(t);
    if (!inserted) return inserted.error();
    id = *inserted;
  }
  std::string why = "its code (workdir " + short_hash + ") is being copied to " + cluster +
                    " (transfer " + std::to_string(id) + ")";
  if (copy && step == CodeStep::start && !copy->error.empty()) {
    why += "; the last copy failed: " + copy->error;
  }
  waits.push_back(std::move(why));
  return Ok{};
}

}  // namespace orch
