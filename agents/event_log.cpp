// See event_log.h.
#include "agents/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace orch::agent {

EventLog::~EventLog() {
  if (fd_ >= 0) close(fd_);
}

bool EventLog::open(const std::string& path, std::string* error) {
  path_ = path;
  // The site's alone, whatever the umask: a job run as another user (--run-as) must not read it.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    *error = "cannot open event file " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

void EventLog::append(const std::string& line, bool durable) {
  const std::string record = decorate_ ? decorate_(line) : line;
  const std::string out = record + "\n";
  const char* p = out.data();
  size_t left = out.size();
  bool ok = fd_ >= 0;
  while (ok && left > 0) {
    ssize_t n = write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // EINVAL: a pipe or /dev/null in manual use, which cannot be synced and need not be.
  if (ok && durable && fsync(fd_) != 0 && errno != EINVAL) ok = false;
  if (observe_) observe_(record);
  if (!ok && !warned_) {
    warned_ = true;
    std::fprintf(stderr, "orchestrate-agent: cannot write event file %s: %s\n", path_.c_str(),
                 std::strerror(errno));
  }
}

}  // namespace orch::agent
