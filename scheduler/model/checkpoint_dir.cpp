// Job checkpoint directories and the lexical confinement of reported paths (checkpoint_dir.h).
#include "scheduler/model/checkpoint_dir.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace orch {
namespace {

constexpr std::size_t kQuotedBytes = 200;

// A path for a message: at most kQuotedBytes of it, in quotes.
std::string quoted(std::string_view path) {
  if (path.size() <= kQuotedBytes) return "'" + std::string(path) + "'";
  return "'" + std::string(path.substr(0, kQuotedBytes)) + "...'";
}

// The components of a path, without empty ones (from "//" or a trailing '/').
std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

std::string join_dir(std::string_view dir, std::string_view rest) {
  std::string d(dir);
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  if (d.empty()) return std::string(rest);
  if (d == "/") return "/" + std::string(rest);
  return d + "/" + std::string(rest);
}

// The normal form when `joined` is absolute (a configured root may hold "." or "//"), else as is.
std::string normal_or_same(const std::string& joined) {
  auto normal = normal_absolute_path(joined);
  return normal ? *normal : joined;
}

}  // namespace

std::string job_checkpoint_dir(std::string_view checkpoints_dir, std::int64_t job_id) {
  return normal_or_same(join_dir(checkpoints_dir, "job-" + std::to_string(job_id)));
}

std::string job_replica_dir(std::string_view checkpoints_dir, std::int64_t job_id) {
  return normal_or_same(
      join_dir(checkpoints_dir, ".orchestrate/replicas/job-" + std::to_string(job_id)));
}

std::string node_local_dir_template(std::string_view root, std::int64_t job_id) {
  return join_dir(root, "job-" + std::to_string(job_id));
}

Result<std::string> expand_node_placeholder(std::string_view text, std::string_view node) {
  const bool plain = std::all_of(node.begin(), node.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '.' || ch == '_' || ch == '-';
  });
  if (node.empty() || node.size() > 64 || !plain || node == "." || node == "..") {
    return make_error(ErrorKind::invalid, "node name \"" + std::string(node.substr(0, 64)) +
                                              "\" is not 1 to 64 letters, digits, '.', '_' or '-'");
  }
  std::string out(text);
  for (auto at = out.find(kNodePlaceholder); at != std::string::npos;
       at = out.find(kNodePlaceholder, at + node.size())) {
    out.replace(at, kNodePlaceholder.size(), node);
  }
  return out;
}

Result<std::string> node_local_job_dir(std::string_view root, std::string_view node,
                                       std::int64_t job_id) {
  auto dir = expand_node_placeholder(node_local_dir_template(root, job_id), node);
  if (!dir) return dir.error();
  return normal_or_same(*dir);
}

Result<std::string> normal_absolute_path(std::string_view path) {
  if (path.find('\0') != std::string_view::npos) {
    return make_error(ErrorKind::invalid, "the path contains a NUL byte");
  }
  if (path.empty()) return make_error(ErrorKind::invalid, "the path is empty");
  if (path.front() != '/') {
    return make_error(ErrorKind::invalid, "the path " + quoted(path) + " is not absolute");
  }
  std::vector<std::string_view> kept;
  for (std::string_view part : components(path)) {
    if (part == ".") continue;
    if (part == "..") {
      if (!kept.empty()) kept.pop_back();
      continue;
    }
    kept.push_back(part);
  }
  if (kept.empty()) return std::string("/");
  std::string out;
  for (std::string_view part : kept) {
    out += '/';
    out += part;
  }
  return out;
}

bool strictly_inside(std::string_view path, std::string_view dir) {
  if (dir.empty() || path.size() <= dir.size()) return false;
  if (path.substr(0, dir.size()) != dir) return false;
  // "/" holds every other absolute path; any other dir needs a '/' right after its own name.
  return dir == "/" || path[dir.size()] == '/';
}

Result<std::string> confine_path(std::string_view path, std::string_view dir) {
  auto boundary = normal_absolute_path(dir);
  if (!boundary || *boundary == "/") {
    return make_error(ErrorKind::invalid, "there is no checkpoint directory to hold it (" +
                                              quoted(dir) +
                                              " is not an absolute directory below /)");
  }
  auto normal = normal_absolute_path(path);
  if (!normal) {
    return make_error(
        ErrorKind::invalid,
        normal.error().message + "; a checkpoint's path must be absolute, inside " + *boundary);
  }
  if (*normal == *boundary) {
    return make_error(ErrorKind::invalid, quoted(path) + " is the checkpoint directory " +
                                              *boundary +
                                              " itself; a checkpoint is a file or a "
                                              "directory inside it");
  }
  if (!strictly_inside(*normal, *boundary)) {
    return make_error(ErrorKind::invalid,
                      quoted(path) + (*normal == path ? "" : " (that is " + quoted(*normal) + ")") +
                          " is outside the checkpoint directory " + *boundary);
  }
  return std::move(*normal);
}

Result<std::string> normal_relative_subdir(std::string_view path) {
  if (path.find('\0') != std::string_view::npos) {
    return make_error(ErrorKind::invalid, "the path contains a NUL byte");
  }
  if (path.empty() || path.front() == '/') {
    return make_error(
        ErrorKind::invalid,
        (path.empty() ? std::string("an empty path") : quoted(path)) + " is not a relative path");
  }
  std::string out;
  for (std::string_view part : components(path)) {
    if (part == "." || part == "..") {
      return make_error(ErrorKind::invalid,
                        quoted(path) + " has a '" + std::string(part) + "' component");
    }
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

}  // namespace orch
