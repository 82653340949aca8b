// See spec_file.h.
#include "cli/spec_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace orch {
namespace {

std::string size_text(std::size_t bytes) {
  if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

bool read_spec_file(const std::string& path, std::size_t limit, std::string& text,
                    std::string& error) {
  const std::string expected = "; expected a YAML or JSON job spec such as examples/jobs/toy.yaml";
  const std::string too_big = "the server takes job specs of at most " + size_text(limit);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot read job spec " + path + ": " + std::strerror(errno) + expected;
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = "cannot read job spec " + path + ": " + std::strerror(errno) + expected;
    ::close(fd);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "job spec " + path + " is a directory" + expected;
    ::close(fd);
    return false;
  }
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > limit) {
    error = "job spec " + path + " is " + std::to_string(st.st_size) + " bytes, and " + too_big;
    ::close(fd);
    return false;
  }
  // Special files (pipes, devices) have no size to trust: read one byte more than the limit.
  std::string out;
  char buf[65536];
  while (out.size() <= limit) {
    const std::size_t want = std::min(sizeof buf, limit + 1 - out.size());
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = "cannot read job spec " + path + ": " + std::strerror(errno) + expected;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (out.size() > limit) {
    error = "job spec " + path + " is larger than " + size_text(limit) +
            " (it was read no further)" + ", and " + too_big;
    return false;
  }
  text = std::move(out);
  return true;
}

}  // namespace orch
