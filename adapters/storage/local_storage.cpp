#include "adapters/storage/local_storage.h"

#include <string>

#include "adapters/process/run_captured.h"
#include "adapters/storage/storage_script.h"

namespace orch::storage {
namespace {

constexpr std::size_t kMaxErr = std::size_t{64} * 1024;

std::string seconds(std::chrono::milliseconds t) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(t).count()) + " s";
}

}  // namespace

Result<ScriptRun> run_shell_script(const std::string& script, std::chrono::milliseconds timeout,
                                   std::size_t max_output) {
  auto run = process::run_captured(
      {"/bin/sh", "-c", script},
      {.timeout = timeout, .max_out = max_output, .kill_on_overflow = true, .max_err = kMaxErr});
  if (!run) return run.error();
  if (run->timed_out) {
    return make_error(ErrorKind::io, "the storage script ran past its deadline of " +
                                         seconds(timeout) + " and was killed");
  }
  if (run->overflowed) {
    return make_error(ErrorKind::io, "the storage script printed more than " +
                                         std::to_string(max_output >> 20) + " MiB and was killed");
  }
  ScriptRun out{-1, std::move(run->out), std::move(run->err)};
  if (run->exit.exit_code >= 0) {
    out.exit_status = run->exit.exit_code;
  } else {
    if (!out.err.empty() && out.err.back() != '\n') out.err += '\n';
    out.err +=
        "orchestrate: storage script killed by signal " + std::to_string(run->exit.signal) + "\n";
  }
  return out;
}

Result<Manifest> local_manifest(const ManifestRequest& request, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) {
    timeout = request.hash == ManifestRequest::Hash::none ? kLocalListTimeout : kLocalHashTimeout;
  }
  auto script = manifest_script(request);
  if (!script) return script.error();
  auto run = run_shell_script(*script, timeout);
  if (!run) {
    return make_error(run.error().kind, "cannot list " + request.path + ": " + run.error().message);
  }
  return parse_manifest_output(run->out, run->err, run->exit_status, request.path);
}

Result<void> local_remove(const RemoveRequest& request, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) timeout = kLocalHashTimeout;
  auto script = remove_script(request);
  if (!script) return script.error();
  auto run = run_shell_script(*script, timeout);
  if (!run) {
    return make_error(run.error().kind,
                      "cannot delete " + request.path + ": " + run.error().message);
  }
  return check_remove_output(run->out, run->err, run->exit_status, request);
}

}  // namespace orch::storage
