#include "scheduler/secrets/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace orch {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// The read itself, on whichever thread runs it. O_NONBLOCK: opening a FIFO for reading would
// otherwise wait for a writer; it does not change how a regular file reads.
Result<std::string> read_now(const std::string& what, const std::string& path,
                             std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(ErrorKind::invalid,
                      what + ": cannot read " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::invalid, what + ": " + path + " is " + kind_of(st.st_mode) +
                                              "; a secret must be a regular file");
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return make_error(ErrorKind::invalid, what + ": " + path + " is larger than " +
                                              std::to_string(max_bytes) + " bytes");
  }
  std::string value(max_bytes + 1, '\0');
  std::size_t got = 0;
  while (got < value.size()) {
    const ssize_t n = ::read(fd, value.data() + got, value.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      std::string message = what;
      message += ": cannot read " + path + ": " + std::strerror(err);
      return make_error(ErrorKind::invalid, message);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got > max_bytes) {  // it grew after fstat
    return make_error(ErrorKind::invalid, what + ": " + path + " is larger than " +
                                              std::to_string(max_bytes) + " bytes");
  }
  value.resize(got);
  if (!value.empty() && value.back() == '\n') value.pop_back();
  if (!value.empty() && value.back() == '\r') value.pop_back();
  if (auto ok = check_secret_value(what, value); !ok) return ok.error();
  return value;
}

// What the reading thread hands back; shared, so a reader that gives up can leave it behind.
struct Pending {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  Result<std::string> result = std::string();
};

}  // namespace

Result<void> check_secret_value(const std::string& what, const std::string& value) {
  if (value.find('\0') != std::string::npos) {
    return make_error(ErrorKind::invalid, what +
                                              ": the value holds a NUL byte, which no "
                                              "environment variable can carry");
  }
  if (value.size() > kMaxSecretBytes) {
    return make_error(ErrorKind::invalid, what + ": the value is larger than " +
                                              std::to_string(kMaxSecretBytes) + " bytes");
  }
  return {};
}

Result<std::string> read_secret_source_value(const std::string& what, const SecretSource& source) {
  if (!source.file.empty()) return read_secret_file(what, source.file);
  const char* v = std::getenv(source.env.c_str());
  if (v == nullptr) {
    return make_error(ErrorKind::invalid, what + ": the server's environment has no " + source.env +
                                              "; set it where the server starts");
  }
  std::string value = v;
  if (auto ok = check_secret_value(what, value); !ok) return ok.error();
  return value;
}

Result<std::string> read_secret_file(const std::string& what, const std::string& path,
                                     std::chrono::milliseconds deadline, std::size_t max_bytes) {
  auto pending = std::make_shared<Pending>();
  // The read runs on a thread of its own so that a file on a filesystem that stopped answering
  // cannot hold the caller: past the deadline the caller goes on and the thread is left to
  // finish (or not) on its own, holding only `pending`.
  std::thread([pending, what, path, max_bytes] {
    Result<std::string> r = read_now(what, path, max_bytes);
    std::lock_guard<std::mutex> lock(pending->mu);
    pending->result = std::move(r);
    pending->done = true;
    pending->done_cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(pending->mu);
  if (!pending->done_cv.wait_for(lock, deadline, [&] { return pending->done; })) {
    return make_error(ErrorKind::invalid, what + ": reading " + path + " took longer than " +
                                              std::to_string(deadline.count()) +
                                              " ms (a stalled filesystem?); nothing was read");
  }
  return std::move(pending->result);
}

}  // namespace orch
