// A submitted spec's `workdir:` bound to the archive its submitter uploaded (issue 40; the
// store is web/code_api.h's CodeApi, given by the composition root).
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

// The error at the spec's workdir key (the backend turns it into "job.yaml:line:col: ...").
Error at_workdir(ErrorKind kind, std::string message) {
  Error e = make_error(kind, std::move(message));
  e.where = "workdir";
  return e;
}

}  // namespace

Result<void> SchedulerBackend::bind_workdir(JobSpec& spec, const Submitter& who) const {
  const bool wants = !spec.workdir.source.empty() || !spec.workdir.sha256.empty();
  if (!wants) {
    if (who.workdir_sha256.empty()) return Ok{};
    return make_error(ErrorKind::invalid,
                      "the request names a workdir archive (?workdir=) but the spec has no "
                      "\"workdir\"; add workdir: with the directory, or leave ?workdir= out");
  }
  const std::string named = spec.workdir.source.empty() ? "an archive" : spec.workdir.source;
  if (who.workdir_sha256.empty()) {
    return at_workdir(
        ErrorKind::invalid,
        "\"workdir\" names " + named +
            ", but the request names no uploaded archive of it; submit with `orchestrate job "
            "submit FILE`, which packs and uploads the directory, or upload a ustar archive of "
            "it with PUT /api/v1/code/{sha256} and submit with ?workdir=sha256:{sha256} "
            "(docs/rest-api.md, \"Code\")");
  }
  if (!code_) {
    return make_error(ErrorKind::unsupported,
                      "this server keeps no workdir archives; submit the job without \"workdir\"");
  }
  auto found = code_->find_code(who.workdir_sha256, who.user);
  if (!found) {
    if (found.error().kind != ErrorKind::not_found) return found.error();
    return at_workdir(ErrorKind::invalid,
                      "\"workdir\": archive " + who.workdir_sha256 + " was not uploaded by " +
                          (who.user.empty() ? std::string("this caller") : who.user) +
                          "; upload it first with PUT /api/v1/code/" + who.workdir_sha256 +
                          " (a job may only use an archive its submitter uploaded)");
  }
  spec.workdir.sha256 = who.workdir_sha256;  // whatever the document said
  spec.workdir.bytes = found->value("bytes", std::int64_t{0});
  return Ok{};
}

}  // namespace orch
