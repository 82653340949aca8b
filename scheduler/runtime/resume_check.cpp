#include "scheduler/runtime/resume_check.h"

namespace orch {
namespace {

ResumeChoice choose(const ResumeCandidate& c, std::vector<RejectedCheckpoint> rejected) {
  ResumeChoice choice;
  choice.checkpoint_id = c.checkpoint_id;
  choice.step = c.step;
  choice.path = c.path;
  choice.node = c.node;
  choice.rejected = std::move(rejected);
  return choice;
}

}  // namespace

Result<ResumeChoice> check_resume_candidates(ClusterPort& port,
                                             const std::vector<ResumeCandidate>& candidates) {
  std::vector<RejectedCheckpoint> rejected;
  for (const auto& c : candidates) {
    // Confined to the directory the copy must lie in: one that resolves outside is refused
    // (nothing of it is read) and never resumed from.
    auto listed = port.manifest({c.path, ManifestRequest::Hash::all, {}, c.within});
    if (!listed) {
      const Error& err = listed.error();
      if (err.kind == ErrorKind::unreachable) return err;
      if (err.kind == ErrorKind::unsupported) return choose(c, std::move(rejected));
      rejected.push_back({c.checkpoint_id, c.step, err.kind == ErrorKind::not_found, err.message,
                          err.kind == ErrorKind::forbidden});
      continue;
    }
    if (c.manifest.files.empty()) {
      // Not listed yet when the launch was planned: being there, whole, is what counts.
      if (listed->files.empty()) {
        rejected.push_back({c.checkpoint_id, c.step, true, c.path + " holds no file"});
        continue;
      }
      return choose(c, std::move(rejected));
    }
    ManifestDiff diff = compare_manifest(c.manifest, *listed);
    if (diff.matches) return choose(c, std::move(rejected));
    rejected.push_back({c.checkpoint_id, c.step, false, diff.difference});
  }
  ResumeChoice none;
  none.rejected = std::move(rejected);
  return none;
}

}  // namespace orch
