// See job_user.h.
#include "agents/job_user.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "agents/user_db.h"

namespace orch::agent {

namespace {

std::string slurp(const char* path, bool* ok) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  *ok = static_cast<bool>(in) || in.eof();
  return ss.str();
}

}  // namespace

bool resolve_job_user(const std::string& name, JobUser* user, std::string* error) {
  if (geteuid() != 0) {
    *error = "--run-as " + name +
             ": the agent must run as root to start the job as another user (it runs as uid " +
             std::to_string(geteuid()) + "); start it as root or leave --run-as out";
    return false;
  }
  bool ok = false;
  const std::string passwd = slurp("/etc/passwd", &ok);
  const auto entry = ok ? find_user(passwd, name) : std::nullopt;
  if (!entry) {
    *error = "--run-as " + name + ": no such user in /etc/passwd (the agent reads the local " +
             "files only); create it (make deps creates orchestrate-job) or name another";
    return false;
  }
  if (entry->uid == 0) {
    *error = "--run-as " + name + ": that user is root (uid 0), so the job would run as root; " +
             "name an unprivileged user such as orchestrate-job";
    return false;
  }
  user->name = name;
  user->uid = entry->uid;
  user->gid = entry->gid;
  user->home = entry->home.empty() ? "/" : entry->home;
  // Without /etc/group the user keeps its primary group alone: fewer rights, never more.
  const std::string group = slurp("/etc/group", &ok);
  user->groups = groups_of(ok ? group : std::string(), name, entry->gid);
  return true;
}

void export_job_user(const JobUser& user) {
  setenv("HOME", user.home.c_str(), 1);
  setenv("USER", user.name.c_str(), 1);
  setenv("LOGNAME", user.name.c_str(), 1);
}

const char* become_job_user(const JobUser& user) {
  if (setgroups(user.groups.size(), user.groups.data()) != 0) return "setgroups";
  if (setresgid(user.gid, user.gid, user.gid) != 0) return "setresgid";
  if (setresuid(user.uid, user.uid, user.uid) != 0) return "setresuid";
  uid_t ruid = 0, euid = 0, suid = 0;
  gid_t rgid = 0, egid = 0, sgid = 0;
  if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) {
    return "read back the user and group ids";
  }
  if (ruid != user.uid || euid != user.uid || suid != user.uid || rgid != user.gid ||
      egid != user.gid || sgid != user.gid || getuid() != user.uid || geteuid() != user.uid) {
    errno = EPERM;
    return "check the user and group ids (they are not the user's)";
  }
  // A process that could switch back would be root in all but name.
  if (setuid(0) == 0 || seteuid(0) == 0) {
    errno = EPERM;
    return "check that root cannot be regained (setuid(0) succeeded)";
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "set no_new_privs";
  return nullptr;
}

}  // namespace orch::agent
