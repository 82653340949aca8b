// Manifests (manifest.h): JSON form and comparison.
#include "scheduler/model/manifest.h"
#include "scheduler/model/json_text.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace orch {
namespace {

using nlohmann::json;

// "a1b2c3d4e5f6…": enough to tell two hashes apart in a message.
std::string short_hash(const std::string& hex) {
  constexpr std::size_t kShown = 12;
  if (hex.size() <= kShown) return hex;
  return hex.substr(0, kShown) + "\u2026";
}

std::string file_name(const std::string& path) {
  return path.empty() ? "the file" : "file " + path;
}

bool is_sha256_hex(const std::string& s) {
  if (s.size() != 64) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A relative, '/'-separated path with no empty, "." or ".." component.
bool is_relative_path(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.back() == '/') return false;
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    const std::string part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

Error bad(const std::string& field, const std::string& what) {
  return make_error(ErrorKind::invalid, "manifest field \"" + field + "\": " + what);
}

// How a JSON value looks in a message: its text, cut short.
std::string shown(const json& v) {
  std::string s = json_text(v);
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return s;
}

}  // namespace

std::uint64_t Manifest::total_bytes() const {
  std::uint64_t sum = 0;
  for (const ManifestFile& f : files) sum += f.size;
  return sum;
}

json manifest_to_json(const Manifest& m) {
  json files = json::array();
  for (const ManifestFile& f : m.files) {
    files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  }
  return {{"directory", m.directory}, {"files", std::move(files)}};
}

Result<Manifest> manifest_from_json(const json& j) {
  if (!j.is_object()) {
    return make_error(ErrorKind::invalid,
                      std::string("manifest: expected a JSON object, got ") + j.type_name());
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "directory" && key != "files") {
      return bad(key, "unknown field; expected \"directory\" and \"files\"");
    }
  }
  Manifest m;
  if (j.contains("directory")) {
    if (!j["directory"].is_boolean()) {
      return bad("directory", "expected true or false, got " + shown(j["directory"]));
    }
    m.directory = j["directory"].get<bool>();
  }
  if (!j.contains("files")) return bad("files", "missing; expected a list of files");
  const json& files = j["files"];
  if (!files.is_array()) return bad("files", "expected a list, got " + shown(files));
  for (std::size_t i = 0; i < files.size(); ++i) {
    const json& f = files[i];
    const std::string at = "files[" + std::to_string(i) + "]";
    if (!f.is_object()) return bad(at, "expected an object, got " + shown(f));
    for (const auto& [key, value] : f.items()) {
      if (key != "path" && key != "size" && key != "sha256") {
        std::string field = at;
        field += "." + key;
        return bad(field, "unknown field; expected \"path\", \"size\" and \"sha256\"");
      }
    }
    ManifestFile file;
    if (!f.contains("path") || !f["path"].is_string()) {
      return bad(at + ".path", f.contains("path") ? "expected a string, got " + shown(f["path"])
                                                  : "missing; expected a relative path");
    }
    file.path = f["path"].get<std::string>();
    if (m.directory && !is_relative_path(file.path)) {
      return bad(at + ".path",
                 "expected a relative path such as \"shard-1.bin\", got " + shown(f["path"]));
    }
    if (!m.directory && !file.path.empty()) {
      return bad(at + ".path", "must be \"\" in a manifest of one file, got " + shown(f["path"]));
    }
    if (!f.contains("size") ||
        !(f["size"].is_number_unsigned() ||
          (f["size"].is_number_integer() && f["size"].get<long long>() >= 0))) {
      return bad(at + ".size", f.contains("size")
                                   ? "expected a byte count >= 0, got " + shown(f["size"])
                                   : "missing; expected a byte count");
    }
    file.size = f["size"].get<std::uint64_t>();
    if (f.contains("sha256")) {
      const json& h = f["sha256"];
      if (!h.is_string() ||
          !(h.get<std::string>().empty() || is_sha256_hex(h.get<std::string>()))) {
        return bad(at + ".sha256",
                   "expected 64 lowercase hex digits (or \"\": not hashed), got " + shown(h));
      }
      file.sha256 = h.get<std::string>();
    }
    m.files.push_back(std::move(file));
  }
  if (!m.directory && m.files.size() != 1) {
    return bad("files",
               "a manifest of one file lists exactly one, got " + std::to_string(m.files.size()));
  }
  std::sort(m.files.begin(), m.files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  for (std::size_t i = 1; i < m.files.size(); ++i) {
    if (m.files[i].path == m.files[i - 1].path) {
      return bad("files", "\"" + m.files[i].path + "\" is listed twice");
    }
  }
  return m;
}

ManifestDiff compare_manifest(const Manifest& expected, const Manifest& observed) {
  ManifestDiff diff;
  auto note = [&diff](std::string what) {
    if (diff.matches) diff.difference = std::move(what);
    diff.matches = false;
    ++diff.differences;
  };
  if (expected.directory != observed.directory) {
    note(expected.directory ? "a file where a directory was expected"
                            : "a directory where a file was expected");
    return diff;
  }
  // Walk both listings in path order, so the first difference reported is the first by path.
  std::map<std::string, const ManifestFile*> want;
  std::map<std::string, const ManifestFile*> have;
  for (const ManifestFile& f : expected.files) want.emplace(f.path, &f);
  for (const ManifestFile& f : observed.files) have.emplace(f.path, &f);
  std::set<std::string> paths;
  for (const auto& [p, f] : want) paths.insert(p);
  for (const auto& [p, f] : have) paths.insert(p);
  for (const std::string& p : paths) {
    auto w = want.find(p);
    auto h = have.find(p);
    if (h == have.end()) {
      note(file_name(p) + " is missing");
    } else if (w == want.end()) {
      note(p.empty() ? "an unexpected file" : "unexpected file " + p);
    } else if (h->second->size != w->second->size) {
      note(file_name(p) + ": size " + std::to_string(h->second->size) + ", expected " +
           std::to_string(w->second->size));
    } else if (!h->second->sha256.empty() && !w->second->sha256.empty() &&
               h->second->sha256 != w->second->sha256) {
      note(file_name(p) + ": SHA-256 " + short_hash(h->second->sha256) + ", expected " +
           short_hash(w->second->sha256));
    }
  }
  return diff;
}

}  // namespace orch
