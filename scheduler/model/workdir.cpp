#include "scheduler/model/workdir.h"

#include <vector>

#include "scheduler/common/sha256.h"

namespace orch {
namespace {

std::string trimmed_root(const std::string& root) {
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  if (r == "/") r.clear();
  return r;
}

void append_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += ';';
}

}  // namespace

std::string code_dir(const std::string& storage_root) {
  return trimmed_root(storage_root) + "/code";
}

std::string code_archive_path(const std::string& storage_root, const std::string& sha256) {
  return code_dir(storage_root) + "/" + sha256 + ".tar";
}

std::string code_tree_path(const std::string& storage_root, const std::string& sha256) {
  return code_dir(storage_root) + "/" + sha256;
}

std::string setup_root(const std::string& storage_root) {
  return trimmed_root(storage_root) + "/setup";
}

std::string setup_dir_path(const std::string& storage_root, const std::string& key) {
  return setup_root(storage_root) + "/" + key;
}

std::string code_store_path(const std::string& sha256) {
  return "/code/" + sha256 + ".tar";
}

std::string setup_key(std::string_view cluster, std::string_view code_sha256,
                      std::string_view setup, std::string_view container) {
  std::string text = "orchestrate-setup-v1;";
  append_field(text, cluster);
  append_field(text, code_sha256);
  append_field(text, setup);
  append_field(text, container);
  return sha256_hex(text);
}

bool is_code_sha256(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

ExitStatus setup_failed_exit(std::string_view marker) {
  ExitStatus s;
  s.cause = ExitCause::setup_failed;
  std::vector<std::string_view> lines;
  while (!marker.empty()) {
    const std::size_t nl = marker.find('\n');
    std::string_view line = marker.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    marker = nl == std::string_view::npos ? std::string_view() : marker.substr(nl + 1);
  }
  std::string head = "setup failed";
  std::size_t first = 0;
  if (!lines.empty() && lines.front().starts_with("exit ")) {
    const std::string code(lines.front().substr(5));
    if (!code.empty() && code.find_first_not_of("0123456789") == std::string::npos &&
        code.size() < 4) {
      s.exit_code = std::stoi(code);
      head += " (exit " + code + ")";
    }
    first = 1;
  }
  std::string tail;
  for (std::size_t i = lines.size(); i > first; --i) {
    std::string_view l = lines[i - 1];
    if (l.empty()) continue;
    if (head.size() + 2 + tail.size() + l.size() + 3 > kSetupDetailBytes) break;
    tail = tail.empty() ? std::string(l) : std::string(l) + " | " + tail;
  }
  s.detail = tail.empty() ? head : head + ": " + tail;
  return s;
}

std::string_view code_extract_snippet() {
  return R"(if [ ! -d "$ORCH_WORKDIR" ]; then
  mkdir -p -- "${ORCH_WORKDIR%/*}"
  orch_t=$(mktemp -d "$ORCH_WORKDIR.part.XXXXXX") || { printf 'orchestrate: cannot create a directory beside %s\n' "$ORCH_WORKDIR" >&2; exit 1; }
  chmod 0755 "$orch_t"
  if tar -x --no-same-owner --keep-old-files -f "$ORCH_CODE_ARCHIVE" -C "$orch_t"; then
    orch_r=$(cd "$orch_t" && pwd -P)
    orch_bad=$(find "$orch_t" -type l -exec sh -c 'for l; do p=$(readlink -f -- "$l"); case "$p" in "$0"|"$0"/*) ;; *) printf "%s\n" "$l";; esac; done' "$orch_r" {} +)
    if [ -n "$orch_bad" ]; then
      printf 'orchestrate: the code archive %s holds a symbolic link out of its tree: %s\n' "$ORCH_CODE_ARCHIVE" "$orch_bad" >&2
      rm -rf -- "$orch_t"; exit 1
    fi
    mv -T -- "$orch_t" "$ORCH_WORKDIR" 2>/dev/null || rm -rf -- "$orch_t"
  else
    rm -rf -- "$orch_t"
  fi
fi
[ -d "$ORCH_WORKDIR" ] && [ ! -h "$ORCH_WORKDIR" ] || { printf 'orchestrate: cannot extract the code %s into %s\n' "$ORCH_CODE_ARCHIVE" "$ORCH_WORKDIR" >&2; exit 1; }
)";
}

std::string setup_snippet(bool per_node) {
  std::string s = per_node ? "orch_n=.$(hostname)\n" : "orch_n=\n";
  s +=
      R"(orch_d=$ORCH_SETUP_DIR
mkdir -p -- "$orch_d" || exit 1
if [ -e "$ORCH_SETUP_FAILED" ]; then printf '[setup] failed on another task of this attempt\n'; exit )" +
      std::to_string(kSetupFailedExit) + R"(; fi
if [ ! -e "$orch_d/done$orch_n" ]; then
  exec 9>>"$orch_d/lock$orch_n" && flock 9 || { printf 'orchestrate: cannot lock %s\n' "$orch_d/lock$orch_n" >&2; exit 1; }
fi
if [ -e "$orch_d/done$orch_n" ]; then printf '[setup] cached (%s)\n' "$orch_d"; exit 0; fi
if [ -e "$ORCH_SETUP_FAILED" ]; then printf '[setup] failed on another task of this attempt\n'; exit )" +
      std::to_string(kSetupFailedExit) + R"(; fi
printf '[setup] running in %s\n' "$ORCH_WORKDIR"
( cd -- "${ORCH_WORKDIR:-$orch_d}" && exec 9>&- && if command -v bash >/dev/null 2>&1; then exec bash -c "$ORCH_SETUP_COMMAND"; else exec /bin/sh -c "$ORCH_SETUP_COMMAND"; fi ) >"$orch_d/log$orch_n" 2>&1 </dev/null
orch_s=$?
sed 's/^/[setup] /' "$orch_d/log$orch_n"
if [ "$orch_s" -eq 0 ]; then : >"$orch_d/done$orch_n"; printf '[setup] done\n'; exit 0; fi
{ printf 'exit %s\n' "$orch_s"; tail -n )" +
      std::to_string(kSetupTailLines) +
      R"( "$orch_d/log$orch_n"; } >"$ORCH_SETUP_FAILED.tmp" && mv -f -- "$ORCH_SETUP_FAILED.tmp" "$ORCH_SETUP_FAILED"
printf '[setup] failed with exit %s\n' "$orch_s"
exit )" +
      std::to_string(kSetupFailedExit) + "\n";
  return s;
}

}  // namespace orch

namespace orch {

std::vector<std::pair<std::string, std::string>> workdir_env(const LaunchRequest& r,
                                                             const std::string& setup_failed_file) {
  std::vector<std::pair<std::string, std::string>> env;
  if (!r.workdir.empty()) {
    env.emplace_back("ORCH_WORKDIR", r.workdir);
    env.emplace_back("ORCH_CODE_ARCHIVE", r.code_archive);
  }
  if (!r.setup.empty()) {
    env.emplace_back("ORCH_SETUP_DIR", r.setup_dir);
    env.emplace_back("ORCH_SETUP_COMMAND", r.setup);
    env.emplace_back("ORCH_SETUP_FAILED", setup_failed_file);
  }
  return env;
}

std::string task_prelude(const LaunchRequest& r) {
  if (r.workdir.empty() && r.setup.empty()) return "";
  std::string s;
  if (!r.workdir.empty()) s += code_extract_snippet();
  if (!r.setup.empty()) {
    s += "(\n" + setup_snippet(r.setup_per_node) + ") || exit $?\n";
  }
  if (!r.workdir.empty()) {
    s += "cd -- \"$ORCH_WORKDIR\" || exit 1\n";
  }
  s += "exec \"$@\"\n";
  return s;
}

}  // namespace orch
