#include "agents/install_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace orch::agent {
namespace {

std::string failure(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Every byte of `in` into `out`; "" or why not.
std::string copy_fd(int in, int out, const std::string& source, const std::string& temp) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failure("cannot read", source);
    if (n == 0) return "";
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return failure("cannot write", temp);
      done += w;
    }
  }
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

bool parse_install_options(const std::vector<std::string>& args, InstallOptions* options,
                           std::string* error) {
  if (args.size() != 1) {
    *error = "install takes one argument, the path to install the agent at (got " +
             std::to_string(args.size()) + ")";
    return false;
  }
  const std::string& dest = args[0];
  if (dest.empty() || dest[0] == '-') {
    *error = "install: '" + dest + "' is not a path to install the agent at";
    return false;
  }
  if (dest.back() == '/') {
    *error = "install: '" + dest + "' names a directory; give the file, such as " + dest +
             "orchestrate-agent";
    return false;
  }
  options->dest = dest;
  return true;
}

std::string install_agent(const InstallOptions& options) {
  const std::string& dest = options.dest;
  struct stat st {};
  const std::string dir = directory_of(dest);
  if (::stat(dir.c_str(), &st) != 0) return failure("cannot install into", dir);
  if (!S_ISDIR(st.st_mode)) return "cannot install into " + dir + ": not a directory";
  if (::stat(dest.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return "cannot install at " + dest + ": it is a directory; give the file's path";
  }
  int in = ::open(options.source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return failure("cannot read the agent at", options.source);
  std::string temp = dest + ".install-XXXXXX";
  int out = ::mkostemp(temp.data(), O_CLOEXEC);
  if (out < 0) {
    std::string why = failure("cannot create a temporary file in", dir);
    ::close(in);
    return why;
  }
  std::string why = copy_fd(in, out, options.source, temp);
  ::close(in);
  if (why.empty() && ::fchmod(out, 0755) != 0) why = failure("cannot make executable", temp);
  if (why.empty() && ::fsync(out) != 0) why = failure("cannot flush", temp);
  if (::close(out) != 0 && why.empty()) why = failure("cannot write", temp);
  if (why.empty() && ::rename(temp.c_str(), dest.c_str()) != 0) {
    why = failure("cannot rename " + temp + " to", dest);
  }
  if (!why.empty()) ::unlink(temp.c_str());
  return why;
}

int install_command(const InstallOptions& options) {
  const std::string why = install_agent(options);
  if (!why.empty()) {
    std::fprintf(stderr, "orchestrate-agent: install: %s\n", why.c_str());
    return 1;
  }
  std::printf("orchestrate-agent: installed at %s\n", options.dest.c_str());
  return 0;
}

}  // namespace orch::agent
