#include "adapters/local/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scheduler/model/launch_request_json.h"

namespace orch::local {

std::string errno_text(int err) {
  return std::strerror(err);
}

Result<void> check_token(const std::string& token) {
  bool ok = !token.empty() && token.size() <= 128 && token[0] != '.';
  for (char c : token) {
    bool allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '_' || c == '-';
    ok = ok && allowed;
  }
  if (ok) return Ok{};
  return make_error(ErrorKind::invalid,
                    "launch token '" + token +
                        "' is not usable as a run directory name: use 1-128 characters from "
                        "[A-Za-z0-9._-], not starting with '.'");
}

std::string runs_dir(const std::string& root) {
  return root + "/runs";
}
std::string down_marker(const std::string& root) {
  return root + "/DOWN";
}

RunPaths run_paths(const std::string& root, const std::string& token) {
  RunPaths p;
  p.dir = runs_dir(root) + "/" + token;
  p.request = p.dir + "/request.json";
  p.agent_pid = p.dir + "/agent.pid";
  p.output = p.dir + "/output.log";
  p.events = p.dir + "/events.jsonl";
  p.lock = p.dir + "/agent.lock";
  p.cancel_requested = p.dir + "/cancel_requested";
  p.gang_failure = p.dir + "/gang_failure.json";
  p.work = p.dir + "/work";
  return p;
}

TaskPaths task_paths(const RunPaths& run, int rank) {
  if (rank == 0) return {run.dir, run.agent_pid, run.events, run.lock};
  TaskPaths t;
  t.dir = run.dir + "/tasks/" + std::to_string(rank);
  t.agent_pid = t.dir + "/agent.pid";
  t.events = t.dir + "/events.jsonl";
  t.lock = t.dir + "/agent.lock";
  return t;
}

AgentEvents read_agent_events(const std::string& events_path) {
  AgentEvents out;
  std::ifstream in(events_path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    std::string event = j.value("event", "");
    auto get_int = [&](const char* key) -> std::optional<int> {
      auto it = j.find(key);
      if (it == j.end() || !it->is_number_integer()) return std::nullopt;
      return it->get<int>();
    };
    if (event == "start") {
      out.child_pid = get_int("pid");
      out.agent_pid = get_int("agent_pid");
    } else if (event == "exit") {
      out.exited = true;
      out.exit_code = get_int("exit_code");
      out.signal = get_int("signal");
      if (auto at = j.find("at_ms"); at != j.end() && at->is_number_integer()) {
        out.exit_at_ms = at->get<std::int64_t>();
      }
    }
  }
  return out;
}

std::optional<TaskFault> read_task_fault(const std::string& events_path) {
  constexpr std::size_t kTail = 64 << 10;
  struct stat st {};
  if (stat(events_path.c_str(), &st) != 0) return std::nullopt;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t from = size > kTail ? size - kTail : 0;
  auto tail = read_range(events_path, from, kTail);
  if (!tail || tail->empty()) return std::nullopt;
  std::string_view text = *tail;
  // The last complete line: a record being written has no newline yet.
  if (text.back() != '\n') text = text.substr(0, text.rfind('\n') + 1);
  if (text.empty()) return std::nullopt;
  text.remove_suffix(1);
  return task_fault_of_line(text.substr(text.rfind('\n') + 1));
}

Result<bool> agent_alive(const std::string& lock_path) {
  int fd = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return false;  // the agent never started
    return make_error(ErrorKind::io,
                      "cannot open lock file " + lock_path + ": " + errno_text(errno));
  }
  int rc;
  do {
    rc = flock(fd, LOCK_SH | LOCK_NB);
  } while (rc < 0 && errno == EINTR);
  int err = errno;
  close(fd);  // releases our shared lock, if we got it
  if (rc == 0) return false;
  if (err == EWOULDBLOCK) return true;
  return make_error(ErrorKind::io, "cannot probe lock file " + lock_path + ": " + errno_text(err));
}

std::string request_to_json(const StoredRequest& stored) {
  nlohmann::json j = launch_request_to_json(stored.request);
  j["assigned_nodes"] = stored.nodes;
  j["launched_at_ms"] = stored.launched_at_ms;
  if (!stored.gpus.empty()) j["gpu_indexes"] = stored.gpus;
  return j.dump(2) + "\n";
}

Result<StoredRequest> request_from_json(const std::string& text, const std::string& path) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return make_error(ErrorKind::io, path + " is not a JSON object; the run directory is damaged");
  }
  auto request = launch_request_from_json(j);
  if (!request) return make_error(ErrorKind::io, path + ": " + request.error().message);
  try {
    StoredRequest s;
    s.request = std::move(*request);
    s.nodes = j.value("assigned_nodes", std::vector<std::string>{});
    s.launched_at_ms = j.value("launched_at_ms", std::int64_t{0});
    s.gpus = j.value("gpu_indexes", std::map<std::string, std::vector<int>>{});
    return s;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::io, path + " has a field of the wrong type: " + e.what());
  }
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::optional<std::int64_t> modified_ms(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::io, "cannot read " + path + ": " + errno_text(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<void> write_file_atomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  // Control files are the server's alone, whatever the umask (a job's user must not read them).
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return make_error(ErrorKind::io, "cannot create " + tmp + ": " + errno_text(errno));
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return make_error(ErrorKind::io, "cannot write " + tmp + ": " + errno_text(err));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  fsync(fd);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return make_error(ErrorKind::io,
                      "cannot rename " + tmp + " to " + path + ": " + errno_text(err));
  }
  return Ok{};
}

Result<std::string> read_range(const std::string& path, std::uint64_t offset,
                               std::size_t max_bytes) {
  if (offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max() / 2)) {
    return make_error(ErrorKind::invalid, "offset " + std::to_string(offset) + " is past any file");
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::string();  // nothing written yet
    return make_error(ErrorKind::io, "cannot open " + path + ": " + errno_text(errno));
  }
  std::string buf(max_bytes, '\0');
  size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = pread(fd, buf.data() + got, max_bytes - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return make_error(ErrorKind::io, "cannot read " + path + ": " + errno_text(err));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  buf.resize(got);
  return buf;
}

Result<OutputLines> read_output_lines(const std::string& path, std::uint64_t offset,
                                      std::size_t max_bytes, bool final) {
  auto chunk = read_range(path, offset, max_bytes);
  if (!chunk) return chunk.error();
  return split_output_chunk(*chunk, offset, max_bytes, final);
}

}  // namespace orch::local
