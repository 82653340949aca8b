// LocalSite::preflight: what a local launch needs, checked on this host (`orchestrate cluster
// check`, scheduler/model/preflight.h): the site's directory writable, the agent executable, the
// run_as user known, and on a GPU site the machine's GPU count (a warning only: gpu_slots.h).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "adapters/local/local_site.h"
#include "adapters/local/run_as.h"

namespace orch {
namespace {

// Writes and removes a file in `root` (made first when missing, as a launch would).
PreflightCheck storage_check(const std::string& root) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) {
    return check_failed("storage-root", "cannot create " + root + ": " + ec.message() +
                                            ": fix storage.root or its permissions");
  }
  const std::string probe = root + "/.orch-preflight-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return check_failed("storage-root", root + " is not writable: " + std::strerror(errno) +
                                            ": fix storage.root or its permissions");
  }
  const bool wrote = ::write(fd, "ok\n", 3) == 3;
  ::close(fd);
  ::unlink(probe.c_str());
  if (!wrote) return check_failed("storage-root", "cannot write to " + root + " (disk full?)");
  return check_passed("storage-root", root + " is writable");
}

PreflightCheck agent_check(const std::string& agent) {
  if (::access(agent.c_str(), X_OK) != 0) {
    return check_failed("agent", "the agent '" + agent + "' is not executable (" +
                                     std::strerror(errno) +
                                     "): build orchestrate-agent and point agent_path at it");
  }
  return check_passed("agent", agent + " is executable");
}

PreflightCheck run_as_check(const std::string& run_as) {
  if (run_as.empty()) return check_passed("run-as", "none configured: jobs run as the server");
  auto user = local::resolve_run_as(run_as);
  if (!user) return check_failed("run-as", user.error().message);
  return check_passed("run-as",
                      "user " + run_as + " exists (uid " + std::to_string(user->uid) + ")");
}

}  // namespace

std::vector<PreflightCheck> LocalSite::preflight() {
  std::vector<PreflightCheck> checks{storage_check(options_.root), agent_check(options_.agent_path),
                                     run_as_check(options_.run_as)};
  if (auto gpus = gpu_check()) checks.push_back(std::move(*gpus));
  return checks;
}

}  // namespace orch
