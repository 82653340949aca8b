// See save_watch.h.
#include "agents/save_watch.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "agents/json_writer.h"

namespace orch::agent {
namespace {

// mountinfo escapes space, tab, newline and backslash in paths as \ooo (octal).
std::string unescape_octal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// "/a/./b//c/../d" -> "/a/b/d", without asking the filesystem (no symbolic links resolved).
std::string normalise(const std::string& path) {
  std::vector<std::string_view> parts;
  std::string_view p = path;
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view part = p.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (auto part : parts) out.append("/").append(part);
  return out.empty() ? "/" : out;
}

bool under(const std::string& path, const std::string& mount) {
  if (mount == "/") return true;
  return path.compare(0, mount.size(), mount) == 0 &&
         (path.size() == mount.size() || path[mount.size()] == '/');
}

std::string insert_before_end(const std::string& line, const std::string& members) {
  if (line.empty() || line.back() != '}') return line;
  return line.substr(0, line.size() - 1) + "," + members + "}";
}

bool is_event(const std::string& line, std::string_view event) {
  const std::string head = "{\"event\":\"" + std::string(event) + "\"";
  return line.compare(0, head.size(), head) == 0;
}

}  // namespace

MountOf mount_of_path(std::string_view mountinfo, const std::string& path) {
  const std::string target = normalise(path);
  MountOf best;
  size_t best_len = 0;
  bool found = false;
  size_t i = 0;
  while (i < mountinfo.size()) {
    size_t nl = mountinfo.find('\n', i);
    if (nl == std::string_view::npos) nl = mountinfo.size();
    auto w = words(mountinfo.substr(i, nl - i));
    i = nl + 1;
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    auto dash = std::find(w.begin(), w.end(), std::string_view("-"));
    if (w.size() < 5 || dash == w.end() || dash + 1 == w.end() || dash - w.begin() < 6) continue;
    const std::string mount = unescape_octal(w[4]);
    if (mount.empty() || mount[0] != '/' || !under(target, mount)) continue;
    if (found && mount.size() < best_len) continue;
    found = true;
    best_len = mount.size();
    best = {mount, std::string(*(dash + 1))};
  }
  return best;
}

MountOf mount_of_path(const std::string& path) {
  // procfs only: the checkpoint's own filesystem may be the stalled one, and a stat or statfs of
  // a path on a hung NFS hard mount blocks the caller.
  int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0 || text.size() > (4u << 20)) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return mount_of_path(text, path);
}

SaveWatch::SaveWatch(const SaveWatchOptions& options, MountLookup lookup)
    : options_(options), lookup_(std::move(lookup)) {}

std::optional<std::int64_t> SaveWatch::bound_ms() const {
  std::optional<std::int64_t> bound;
  if (options_.stall_after_ms > 0) bound = options_.stall_after_ms;
  if (measured_ms_.size() >= static_cast<size_t>(kMeasuredSaves)) {
    std::vector<std::int64_t> v = measured_ms_;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const double median = n % 2 ? static_cast<double>(v[n / 2])
                                : (static_cast<double>(v[n / 2 - 1]) + v[n / 2]) / 2.0;
    const auto own = std::max(kStallMinMs, static_cast<std::int64_t>(kStallFactor * median));
    bound = bound ? std::min(*bound, own) : own;
  }
  return bound;
}

std::vector<EventRecord> SaveWatch::on_start(std::int64_t step, const std::string& path,
                                             std::int64_t steady_ms, std::int64_t wall_ms) {
  Save s;
  s.step = step;
  s.path = path;
  s.started_ms = steady_ms;
  s.bound_ms = bound_ms().value_or(0);
  save_ = std::move(s);
  JsonWriter w;
  w.begin_object();
  w.member("event", "checkpoint_start");
  w.member("step", step);
  w.member("path", path);
  w.member("at_ms", wall_ms);
  w.end_object();
  return {{w.str(), true, ""}};
}

void SaveWatch::on_checkpoint(std::int64_t steady_ms) {
  if (!save_) return;
  measured_ms_.push_back(std::max<std::int64_t>(0, steady_ms - save_->started_ms));
  // The median of the newest saves: a filesystem that got slower for good moves the bound.
  if (measured_ms_.size() > 32) measured_ms_.erase(measured_ms_.begin());
  save_.reset();
}

std::string SaveWatch::stall_json(const Save& s, std::int64_t steady_ms, bool record,
                                  std::int64_t wall_ms) const {
  JsonWriter w;
  w.begin_object();
  if (record) w.member("event", "io_stall");
  w.member("step", s.step);
  w.member("path", s.path);
  if (!s.where.mount.empty()) w.member("mount", s.where.mount);
  if (!s.where.fs.empty()) w.member("fs", s.where.fs);
  w.member("running_s", static_cast<double>(steady_ms - s.started_ms) / 1000.0, 1);
  w.member("after_s", static_cast<double>(s.bound_ms) / 1000.0, 1);
  if (!options_.node.empty()) w.member("node", options_.node);
  w.optional_member("task_rank", options_.task_rank);
  if (record) w.member("at_ms", wall_ms);
  w.end_object();
  return w.str();
}

std::vector<EventRecord> SaveWatch::on_tick(std::int64_t steady_ms, std::int64_t wall_ms) {
  if (!save_ || save_->stalled || save_->bound_ms <= 0) return {};
  if (steady_ms - save_->started_ms < save_->bound_ms) return {};
  save_->stalled = true;
  if (lookup_) save_->where = lookup_(save_->path);
  char msg[160];
  std::snprintf(msg, sizeof msg,
                "orchestrate-agent: the save of step %lld has run %.0f s (io_stall after %.0f s)",
                static_cast<long long>(save_->step),
                static_cast<double>(steady_ms - save_->started_ms) / 1000.0,
                static_cast<double>(save_->bound_ms) / 1000.0);
  return {{stall_json(*save_, steady_ms, true, wall_ms), true, msg}};
}

std::int64_t SaveWatch::next_due_in(std::int64_t steady_ms) const {
  if (!save_ || save_->stalled || save_->bound_ms <= 0) return -1;
  return std::max<std::int64_t>(0, save_->started_ms + save_->bound_ms - steady_ms);
}

void SaveWatch::decorate(std::vector<EventRecord>* records, std::int64_t steady_ms) const {
  if (!save_) return;
  for (EventRecord& r : *records) {
    if (save_->stalled && is_event(r.line, "heartbeat")) {
      r.line = insert_before_end(r.line, "\"stall\":" + stall_json(*save_, steady_ms, false, 0));
    } else if (is_event(r.line, "checkpoint")) {
      JsonWriter w;
      w.begin_object();
      w.member("save_s", static_cast<double>(steady_ms - save_->started_ms) / 1000.0);
      w.end_object();
      r.line = insert_before_end(r.line, w.str().substr(1, w.str().size() - 2));
    }
  }
}

}  // namespace orch::agent
