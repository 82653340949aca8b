#pragma once
// `run --run-as USER`: the job runs as another, unprivileged user while the agent stays what it
// was started as (the local site's server user, root), so the job can neither read the server's
// files nor signal, trace or replace the agent (docs/security.md, "The host"). The user is looked
// up once, before the fork; the child then switches to it for good with async-signal-safe calls
// only, checks that it cannot switch back, and sets no_new_privs so that no set-user-ID program
// it runs can give root back.

#include <sys/types.h>

#include <string>
#include <vector>

namespace orch::agent {

struct JobUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // its supplementary groups, the primary one included
  std::string home;
};

// Looks the user up in /etc/passwd and its groups in /etc/group (user_db.h). false with *error
// (saying what to do) when the agent cannot run a job as it: the agent is not root, there is no
// such user, or the user is root itself.
bool resolve_job_user(const std::string& name, JobUser* user, std::string* error);

// Sets HOME, USER and LOGNAME to the user's (the agent's environment is the child's).
void export_job_user(const JobUser& user);

// In the forked child, before exec: setgroups, setresgid, setresuid, each checked; then a check
// that every real, effective and saved id is the user's and that setuid(0) fails; then
// PR_SET_NO_NEW_PRIVS. nullptr on success, else the step that failed (errno says why). Only
// async-signal-safe calls.
const char* become_job_user(const JobUser& user);

}  // namespace orch::agent
