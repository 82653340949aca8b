#pragma once
// Users and groups from the files database (/etc/passwd, /etc/group), read by hand. The agent is
// linked statically, and a static program that calls getpwnam() loads the NSS modules of
// whatever glibc the machine has, which need not match the one it was linked with; reading the
// two files keeps it self-contained. A user that only a directory service knows needs a local
// entry (`make deps` creates orchestrate-job with useradd). Pure: the texts are given.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch::agent {

struct UserEntry {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
};

// The entry of `name` in a passwd file's text ("name:x:uid:gid:gecos:home:shell" lines; blank
// lines, comments and lines that do not parse are skipped); nullopt when there is none.
std::optional<UserEntry> find_user(std::string_view passwd_text, std::string_view name);

// The groups `name` belongs to: `primary` first, then every group of a group file's text
// ("name:x:gid:member,member" lines) that lists it, each once.
std::vector<gid_t> groups_of(std::string_view group_text, std::string_view name, gid_t primary);

}  // namespace orch::agent
