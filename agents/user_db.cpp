// See user_db.h.
#include "agents/user_db.h"

#include <algorithm>
#include <cstdint>

#include "agents/cli_values.h"

namespace orch::agent {
namespace {

// The ':'-separated fields of one line.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = line.find(':', start);
    out.push_back(line.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) return out;
    start = colon + 1;
  }
}

// Each line of a file's text, without its newline (and a '\r' before it).
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() != '#') f(line);
    start = end + 1;
  }
}

bool parse_id(std::string_view s, std::uint32_t* out) {
  std::int64_t n = 0;
  if (!parse_int64(std::string(s), 0, 0xFFFFFFFE, &n)) return false;
  *out = static_cast<std::uint32_t>(n);
  return true;
}

}  // namespace

std::optional<UserEntry> find_user(std::string_view passwd_text, std::string_view name) {
  std::optional<UserEntry> found;
  for_each_line(passwd_text, [&](std::string_view line) {
    if (found) return;
    const auto f = fields_of(line);
    std::uint32_t uid = 0, gid = 0;
    if (f.size() != 7 || f[0] != name || !parse_id(f[2], &uid) || !parse_id(f[3], &gid)) return;
    found = UserEntry{std::string(f[0]), uid, gid, std::string(f[5])};
  });
  return found;
}

std::vector<gid_t> groups_of(std::string_view group_text, std::string_view name, gid_t primary) {
  std::vector<gid_t> out = {primary};
  for_each_line(group_text, [&](std::string_view line) {
    const auto f = fields_of(line);
    std::uint32_t gid = 0;
    if (f.size() != 4 || !parse_id(f[2], &gid)) return;
    std::string_view members = f[3];
    bool member = false;
    while (!members.empty() && !member) {
      const std::size_t comma = members.find(',');
      member = members.substr(0, comma) == name;
      members = comma == std::string_view::npos ? std::string_view() : members.substr(comma + 1);
    }
    if (member && std::find(out.begin(), out.end(), gid) == out.end()) out.push_back(gid);
  });
  return out;
}

}  // namespace orch::agent
