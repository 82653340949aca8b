// See torch_probe.h.
#include "agents/torch_probe.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "agents/cli_values.h"
#include "agents/subprocess.h"
#include "agents/torch_probe_script.h"

namespace orch::agent {
namespace {

// A directory only this user can read, with the script in it; removed by the destructor.
class ScriptFile {
 public:
  ScriptFile() {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/orch-torch-XXXXXX";
    std::vector<char> buf(dir.begin(), dir.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      error_ = "cannot make a directory for the torch probe in " + dir.substr(0, dir.size() - 18) +
               ": " + std::strerror(errno);
      return;
    }
    dir_ = buf.data();
    path_ = dir_ + "/torch_probe.py";
    int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    std::string_view text = torch_probe_script();
    bool ok = fd >= 0;
    for (size_t done = 0; ok && done < text.size();) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) done += static_cast<size_t>(n);
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (!ok) error_ = "cannot write " + path_ + ": " + std::strerror(errno);
  }
  ~ScriptFile() {
    if (!path_.empty()) unlink(path_.c_str());
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  ScriptFile(const ScriptFile&) = delete;
  ScriptFile& operator=(const ScriptFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }  // "" when the script is in place

 private:
  std::string dir_, path_, error_;
};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The last non-empty line of a program's stderr (a Python traceback ends with the exception).
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, std::min<size_t>(end + 1 - start, 300));
}

TorchProbe failed(const std::string& why) {
  return TorchProbe{std::nullopt, Check{"torch-probe", false, why}};
}

}  // namespace

TorchProbe run_torch_probe(const std::string& python, double seconds, double grace_s) {
  std::string program = python.find('/') == std::string::npos ? find_in_path(python) : python;
  if (program.empty()) return failed("no " + python + " in PATH to run the torch probe");
  ScriptFile script;
  if (!script.error().empty()) return failed(script.error());

  const double limit_s = seconds + grace_s;
  CapturedRun run = run_captured({program, script.path(), "--seconds", seconds_text(seconds)},
                                 limit_s, /*own_group=*/true);
  if (!run.started) return failed(run.error);
  if (run.timed_out) {
    return failed(program + " did not finish the torch probe within " + seconds_text(limit_s) +
                  " s (--torch-s " + seconds_text(seconds) + " and " + seconds_text(grace_s) +
                  " s to start; killed)");
  }
  std::string why;
  std::optional<TorchReading> reading = parse_torch_output(run.out, &why);
  if (!reading) {
    std::string how = run.signal ? "signal " + std::to_string(run.signal)
                                 : "exit " + std::to_string(run.exit_code);
    std::string err = last_line(run.err);
    return failed(program + " (" + how + "): " + why + (err.empty() ? "" : ": " + err));
  }
  TorchProbe p{reading, torch_check(*reading)};
  if (run.exit_code != 0 && p.check.ok) {
    p.check.ok = false;
    p.check.detail =
        "the torch probe exited " + std::to_string(run.exit_code) + " after " + p.check.detail;
  }
  return p;
}

bool is_torch_flag(const std::string& flag) {
  return flag == "--torch-python" || flag == "--torch-s";
}

bool parse_torch_flag(const std::string& flag, const std::string& value, std::string* python,
                      double* seconds) {
  if (flag == "--torch-python") {
    *python = value;
    return !value.empty();
  }
  return parse_seconds(value, 3600, seconds) && *seconds > 0;
}

void write_torch(JsonWriter& w, const TorchReading& r) {
  w.key("torch");
  w.begin_object();
  w.member("device", r.device);
  w.member("dtype", r.dtype);
  if (!r.version.empty()) w.member("version", r.version);
  w.key("gpus");
  w.begin_array();
  for (const TorchGpu& g : r.gpus) {
    w.begin_object();
    w.member("index", g.index);
    if (!g.name.empty()) w.member("name", g.name);
    w.optional_member("tflops", g.tflops, 6);
    w.optional_member("hbm_gb_s", g.hbm_gb_s, 2);
    w.optional_member("n", g.n);
    w.end_object();
  }
  w.end_array();
  w.optional_member("allreduce_busbw_gb_s", r.allreduce_busbw_gb_s, 3);
  w.optional_member("allreduce_bytes", r.allreduce_bytes);
  w.optional_member("world", r.world);
  w.optional_member("seconds", r.seconds, 2);
  w.end_object();
}

}  // namespace orch::agent
