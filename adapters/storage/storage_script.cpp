#include "adapters/storage/storage_script.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "adapters/ssh/shell_quote.h"
#include "scheduler/model/checkpoint_dir.h"

namespace orch::storage {
namespace {

constexpr std::string_view kHeader = "orchestrate-manifest-v1";

// The path's components without empty ones ("//", a trailing '/'); false when one is "." or "..".
bool plain_components(std::string_view path, std::vector<std::string_view>* parts) {
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    if (part == "." || part == "..") return false;
    if (!part.empty()) parts->push_back(part);
    i = j + 1;
  }
  return true;
}

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The listing's tokens after the header: every NUL-terminated record (a last record without
// its NUL means the output was cut short: it is dropped, and "end" is then missing).
std::vector<std::string_view> records(std::string_view out) {
  std::vector<std::string_view> r;
  std::size_t i = 0;
  while (i < out.size()) {
    std::size_t j = out.find('\0', i);
    if (j == std::string_view::npos) break;
    r.push_back(out.substr(i, j - i));
    i = j + 1;
  }
  return r;
}

Error listing_failed(const std::string& path, const std::string& why) {
  return make_error(ErrorKind::io, "cannot list " + path + ": " + why);
}

// The marker a removal prints when it refused a path outside its directory.
constexpr std::string_view kRemoveOutside = "orchestrate-remove: outside";

// A path for a message: its first 200 bytes, a NUL byte shown as '?'.
std::string shown(const std::string& path) {
  std::string s = path.substr(0, 200);
  for (char& c : s) {
    if (c == '\0') c = '?';
  }
  return s.size() < path.size() ? s + "..." : s;
}

// The directory a copy must lie in, in normal form: absolute and not "/".
Result<std::string> confining_dir(const std::string& within, const std::string& what) {
  auto normal = normal_absolute_path(within);
  if (!normal || *normal == "/") {
    return make_error(ErrorKind::invalid, what + ": the directory it must lie in, '" +
                                              shown(within) +
                                              "', is not an absolute directory below /");
  }
  return std::move(*normal);
}

// What hashes the copy's files under request.hash: `dir` runs inside a directory copy, `file`
// hashes a single-file copy (on stdin). With `confined`, a file named in hash_files is hashed
// only when no symbolic link lies on its way (its resolved path is the path itself).
Result<void> hash_commands(const ManifestRequest& request, bool confined, std::string* dir,
                           std::string* file) {
  const std::string whole_file =
      confined ? "    sha256sum -z <&3 || exit 1\n" : "    sha256sum -z < \"$p\" || exit 1\n";
  switch (request.hash) {
    case ManifestRequest::Hash::none:
      return Ok{};
    case ManifestRequest::Hash::all:
      *dir = "    find . -type f -exec sha256sum -z -- {} + || exit 1\n";
      *file = whole_file;
      return Ok{};
    case ManifestRequest::Hash::listed:
      break;
  }
  std::set<std::string> names(request.hash_files.begin(), request.hash_files.end());
  std::string words;
  for (const std::string& name : names) {
    if (name.empty()) {  // the copy is one file: hash it
      *file = whole_file;
      continue;
    }
    std::vector<std::string_view> parts;
    // As the listing writes paths: no leading, trailing or repeated '/', no . or ..
    if (name.front() == '/' || name.back() == '/' || name.find("//") != std::string::npos ||
        !plain_components(name, &parts)) {
      return make_error(ErrorKind::invalid,
                        "file to hash '" + name + "' in " + request.path +
                            " is not a relative path as the listing writes it (no leading, "
                            "trailing or repeated '/', no . or .. components)");
    }
    auto q = shell_quote("./" + name);
    if (!q) return q.error();
    words += ' ' + *q;
    if (words.size() > kMaxListedBytes) {
      return make_error(ErrorKind::invalid, "too many files to hash by name in " + request.path +
                                                " (" + std::to_string(names.size()) +
                                                "): name fewer, or hash them all (Hash::all)");
    }
  }
  if (words.empty()) return Ok{};
  // Only names that are regular files in the tree, as the listing shows them: a name that is
  // missing or a symbolic link is simply not hashed.
  const std::string no_link_on_the_way =
      confined ? " && [ \"$(realpath -e -- \"$f\" 2>/dev/null)\" = \"$d/${f#./}\" ]" : "";
  *dir = (confined ? "    d=$(pwd -P)\n" : "") + std::string("    set --\n    for f in") + words +
         "; do\n"
         "      if [ -f \"$f\" ] && [ ! -h \"$f\" ]" +
         no_link_on_the_way +
         "; then set -- \"$@\" \"$f\"; fi\n"
         "    done\n"
         "    if [ $# -gt 0 ]; then sha256sum -z -- \"$@\" || exit 1; fi\n";
  return Ok{};
}

// The lines of a confined listing (ManifestRequest::within) that resolve the copy and its
// directory and end the script with the `outside` record unless the copy lies strictly inside:
// a directory that is itself a symbolic link, or does not resolve, holds nothing. $p becomes the
// resolved path, so nothing below follows a link the check did not see. `inside` is checked
// again where the script enters the copy (cd -P) or opens it (fd 3): a link swapped in after
// this check is caught there.
std::string confinement_lines(const std::string& quoted_within) {
  return "w=" + quoted_within +
         "\n"
         "outside() { printf 'outside\\0end\\0'; exit 0; }\n"
         "if [ -h \"$w\" ] || ! rw=$(realpath -e -- \"$w\" 2>/dev/null); then outside; fi\n"
         "inside() { case $1 in \"$rw\"/?*) return 0 ;; esac; return 1; }\n"
         "rp=$(realpath -e -- \"$p\") || exit 1\n"
         "inside \"$rp\" || outside\n"
         "p=$rp\n";
}

// The copy's path and the directory it must lie in, as the script uses them: confined to
// request.within when set (lexically here, ErrorKind::forbidden outside; the script resolves
// links), and "./"-prefixed when relative.
Result<std::pair<std::string, std::string>> listing_paths(const ManifestRequest& request) {
  if (request.path.empty()) {
    return make_error(ErrorKind::invalid, "a storage listing needs a path");
  }
  std::string path = request.path;
  std::string within;
  if (!request.within.empty()) {
    auto dir = confining_dir(request.within, "cannot list " + shown(request.path));
    if (!dir) return dir.error();
    auto confined = confine_path(request.path, *dir);
    if (!confined) {
      return make_error(ErrorKind::forbidden, "refusing to list: " + confined.error().message);
    }
    path = std::move(*confined);
    within = std::move(*dir);
  }
  // A relative path starting with '-' would read as an option to cd and find.
  if (path.front() != '/') path = "./" + path;
  return std::make_pair(std::move(path), std::move(within));
}

}  // namespace

std::string stderr_tail(const std::string& err, std::size_t max_bytes) {
  std::string s = err;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.size() > max_bytes) s = "..." + s.substr(s.size() - max_bytes);
  return s;
}

Result<std::string> manifest_script(const ManifestRequest& request) {
  auto paths = listing_paths(request);
  if (!paths) return paths.error();
  const auto& [path, within] = *paths;
  const bool confined = !within.empty();
  auto quoted = shell_quote(path);
  if (!quoted) return quoted.error();
  auto quoted_within = shell_quote(within);
  if (!quoted_within) return quoted_within.error();
  std::string hash_dir;   // what hashes a directory's files, run inside it
  std::string hash_file;  // what hashes a single file
  if (auto h = hash_commands(request, confined, &hash_dir, &hash_file); !h) return h.error();

  std::string s;
  s += "LC_ALL=C; export LC_ALL; unset CDPATH\n";
  s += "p=" + *quoted + "\n";
  s += "printf '" + std::string(kHeader) + "\\0'\n";
  // One stat -L says whether the path is missing, a directory or a file (following a link at
  // the root). The reason is the end of stat's message, after the quoted path.
  s += "if ! t=$(stat -L -c %F -- \"$p\" 2>&1); then\n";
  s += "  case $t in\n";
  s += "    *': No such file or directory'|*': Not a directory')\n";
  s += "      printf 'missing\\0end\\0'; exit 0 ;;\n";
  s += "  esac\n";
  s += "  printf '%s\\n' \"$t\" >&2; exit 1\n";
  s += "fi\n";
  if (confined) s += confinement_lines(*quoted_within);
  s += "case $t in\n";
  s += "  directory)\n";
  s += "    cd -P \"$p\" || exit 1\n";
  if (confined) s += "    inside \"$(pwd -P)\" || outside\n";
  s += "    printf 'dir\\0'\n";
  s += "    find . -type f -printf '%s %P\\0' || exit 1\n";
  s += "    printf 'hashes\\0'\n";
  s += hash_dir;
  s += "    ;;\n";
  s += "  'regular file'|'regular empty file')\n";
  if (confined) {
    // Opened once: the size and the hash are of the file the check saw.
    s += "    exec 3< \"$p\" || exit 1\n";
    s += "    inside \"$(readlink -f /dev/fd/3)\" || outside\n";
    s += "    printf 'file\\0'\n";
    s += "    n=$(stat -L -c %s /dev/fd/3) || exit 1\n";
  } else {
    s += "    printf 'file\\0'\n";
    s += "    n=$(stat -L -c %s -- \"$p\") || exit 1\n";
  }
  s += "    printf '%s \\0' \"$n\"\n";
  s += "    printf 'hashes\\0'\n";
  s += hash_file;
  s += "    ;;\n";
  s += "  *) printf '%s is a %s, neither a regular file nor a directory\\n' \"$p\" \"$t\" >&2\n";
  s += "     exit 1 ;;\n";
  s += "esac\n";
  s += "printf 'end\\0'\n";
  return s;
}

Result<Manifest> parse_manifest_output(const std::string& out, const std::string& err,
                                       int exit_status, const std::string& path) {
  // The header starts a record: at the very start, or after a NUL or newline (what a login
  // profile printed before it is skipped).
  std::size_t start = std::string::npos;
  for (std::size_t at = out.find(kHeader); at != std::string::npos;
       at = out.find(kHeader, at + 1)) {
    bool starts = at == 0 || out[at - 1] == '\0' || out[at - 1] == '\n';
    bool ends = at + kHeader.size() < out.size() && out[at + kHeader.size()] == '\0';
    if (starts && ends) {
      start = at + kHeader.size() + 1;
      break;
    }
  }
  const std::string why_err = stderr_tail(err);
  if (exit_status != 0 || start == std::string::npos) {
    std::string why = why_err.empty() ? "no output from the listing script" : why_err;
    if (exit_status != 0) why += " (exit status " + std::to_string(exit_status) + ")";
    return listing_failed(path, why);
  }
  std::vector<std::string_view> recs = records(std::string_view(out).substr(start));
  if (recs.empty() || recs.back() != "end") {
    return listing_failed(
        path, "the listing was cut short" + (why_err.empty() ? std::string() : ": " + why_err));
  }
  recs.pop_back();
  const std::string_view kind = recs.empty() ? std::string_view() : recs.front();
  if (kind == "missing") {
    return make_error(ErrorKind::not_found, path + " does not exist at the site");
  }
  if (kind == "outside") {
    return make_error(ErrorKind::forbidden,
                      "refusing to list " + path +
                          ": it resolves outside the directory it must lie in (a symbolic link "
                          "leads out of it, or the directory is itself a link); nothing was read");
  }
  if (kind != "dir" && kind != "file") {
    return listing_failed(path, "unexpected listing (kind '" + std::string(kind) + "')");
  }
  Manifest m;
  m.directory = kind == "dir";
  std::map<std::string, std::size_t> index;  // path -> position in m.files
  std::size_t i = 1;
  for (; i < recs.size() && recs[i] != "hashes"; ++i) {
    std::string_view r = recs[i];
    std::size_t space = r.find(' ');
    std::string_view digits = r.substr(0, space);
    if (space == std::string_view::npos || digits.empty() || digits.size() > 19 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return listing_failed(path, "unexpected size record '" + std::string(r.substr(0, 80)) + "'");
    }
    ManifestFile f;
    f.size = std::stoull(std::string(digits));
    f.path = std::string(r.substr(space + 1));
    if (m.directory == f.path.empty() || (!m.directory && !m.files.empty())) {
      return listing_failed(path, "unexpected file record '" + std::string(r.substr(0, 80)) + "'");
    }
    index.emplace(f.path, m.files.size());
    m.files.push_back(std::move(f));
  }
  if (i == recs.size()) return listing_failed(path, "the listing has no hashes section");
  if (!m.directory && m.files.empty()) return listing_failed(path, "the file has no size record");
  for (++i; i < recs.size(); ++i) {
    std::string_view r = recs[i];
    if (r.size() < 67 || !is_hex64(r.substr(0, 64)) || r[64] != ' ' ||
        (r[65] != ' ' && r[65] != '*')) {
      return listing_failed(path, "unexpected hash record '" + std::string(r.substr(0, 80)) + "'");
    }
    std::string_view name = r.substr(66);
    std::string key;
    if (m.directory) {
      if (name.substr(0, 2) != "./") {
        return listing_failed(
            path, "unexpected hash record name '" + std::string(name.substr(0, 80)) + "'");
      }
      key = std::string(name.substr(2));
    }
    // A file that appeared between the two passes is not in the listing: its hash is dropped.
    auto it = index.find(key);
    if (it != index.end()) m.files[it->second].sha256 = std::string(r.substr(0, 64));
  }
  std::sort(m.files.begin(), m.files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  return m;
}

Result<std::string> remove_script(const RemoveRequest& request) {
  const std::string& path = request.path;
  if (request.within.empty()) {
    return make_error(ErrorKind::invalid, "refusing to delete '" + shown(path) +
                                              "': no directory it must lie in was given");
  }
  auto dir = confining_dir(request.within, "refusing to delete '" + shown(path) + "'");
  if (!dir) return dir.error();
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos) {
    return make_error(ErrorKind::invalid, "refusing to delete '" + shown(path) +
                                              "': the path must be absolute, without NUL bytes");
  }
  auto confined = confine_path(path, *dir);
  if (!confined) {
    return make_error(ErrorKind::forbidden, "refusing to delete '" + shown(path) + "': " +
                                                confined.error().message + "; nothing was deleted");
  }
  const std::string& normal = *confined;  // strictly inside *dir: it has a parent and a name
  const std::size_t slash = normal.rfind('/');
  auto q_path = shell_quote(normal);
  auto q_within = shell_quote(*dir);
  auto q_parent = shell_quote(normal.substr(0, slash));
  auto q_name = shell_quote("./" + normal.substr(slash + 1));
  if (!q_path || !q_within || !q_parent || !q_name) {
    return make_error(ErrorKind::invalid, "refusing to delete '" + shown(path) +
                                              "': it cannot be quoted for the shell");
  }
  // Nothing there is nothing to delete. Otherwise the path, resolved (a final link too), must
  // lie strictly inside the resolved directory, which must not itself be a link; rm then runs
  // in the resolved parent, on the last name alone, so it never follows a link out (a link is
  // removed, not followed, by rm -rf).
  std::string s;
  s += "LC_ALL=C; export LC_ALL; unset CDPATH\n";
  s += "w=" + *q_within + "; p=" + *q_path + "; d=" + *q_parent + "; b=" + *q_name + "\n";
  s += "if [ ! -e \"$p\" ] && [ ! -h \"$p\" ]; then exit 0; fi\n";
  s += "refuse() { printf '" + std::string(kRemoveOutside) +
       "\\n'; printf '%s\\n' \"$1\" >&2; exit 0; }\n";
  s += "[ -h \"$w\" ] && refuse \"$w is a symbolic link\"\n";
  s += "rw=$(realpath -e -- \"$w\") || exit 1\n";
  s += "rp=$(realpath -m -- \"$p\") || exit 1\n";
  s += "case $rp in \"$rw\"/?*) ;; *) refuse \"$p resolves outside $w\" ;; esac\n";
  s += "cd -P -- \"$d\" || exit 1\n";
  s += "rd=$(pwd -P) || exit 1\n";
  s += "case $rd/ in \"$rw\"/*) ;; *) refuse \"$d resolves outside $w\" ;; esac\n";
  s += "rm -rf -- \"$b\"\n";
  return s;
}

Result<void> check_remove_output(const std::string& out, const std::string& err, int exit_status,
                                 const RemoveRequest& request) {
  const std::string& path = request.path;
  if (exit_status == 0 && out.find(kRemoveOutside) != std::string::npos) {
    return make_error(ErrorKind::forbidden,
                      "refusing to delete " + path + ": it resolves outside " + request.within +
                          " at the site (" + stderr_tail(err, 200) +
                          "); a symbolic link leads out of it, so nothing was deleted");
  }
  if (exit_status == 0) return Ok{};
  std::string why = stderr_tail(err);
  return make_error(ErrorKind::io, "cannot delete " + path + ": " +
                                       (why.empty() ? std::string("rm failed") : why) +
                                       " (exit status " + std::to_string(exit_status) + ")");
}

std::chrono::milliseconds hash_deadline(std::chrono::milliseconds base, const Manifest& sizes) {
  constexpr double kSlowestHashRate = 20e6;  // bytes/s
  return base + std::chrono::milliseconds(static_cast<std::int64_t>(
                    static_cast<double>(sizes.total_bytes()) / kSlowestHashRate * 1e3));
}

std::chrono::milliseconds delete_deadline(std::chrono::milliseconds base, const Manifest& listing) {
  constexpr std::chrono::milliseconds kPerFile{5};
  return base + kPerFile * static_cast<std::int64_t>(listing.files.size());
}

}  // namespace orch::storage
