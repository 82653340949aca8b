// The local provider's section of a cluster entry: who the jobs run as on this machine.
#include <string_view>

#include "scheduler/spec/container_section.h"
#include "scheduler/spec/provider_sections.h"

namespace orch {
namespace {

using yaml::MapView;

// A user name as useradd takes it: a letter or "_", then letters, digits, "_", "-" or ".", at
// most 32 characters ("$" may end it, as machine accounts do). That the user exists is checked
// when the server starts (server/server.cpp), not here: the parser does no I/O.
bool is_user_name(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  auto letter = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); };
  if (!letter(s[0]) && s[0] != '_') return false;
  for (std::size_t i = 1; i < s.size(); ++i) {
    const char ch = s[i];
    const bool ok = letter(ch) || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.' ||
                    (ch == '$' && i + 1 == s.size());
    if (!ok) return false;
  }
  return true;
}

constexpr yaml::StringRule kUserName{
    is_user_name,
    "a user name: a letter or \"_\", then letters, digits, \"_\", \"-\" or \".\" (at most 32)"};

}  // namespace

void read_local_sections(const MapView& entry, ClusterSpec& c) {
  MapView local = entry.child("local", "local", {"run_as", "containers"},
                              "a map such as {run_as: orchestrate-job}");
  local.read_string("run_as", c.local.run_as, kUserName,
                    "an unprivileged user such as orchestrate-job");
  read_container_runtime(local, c.local.containers,
                         {ContainerRuntime::none, ContainerRuntime::apptainer});
}

}  // namespace orch
