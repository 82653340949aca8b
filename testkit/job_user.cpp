// See job_user.h.
#include "testkit/job_user.h"

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

namespace orch::testkit {
namespace {

namespace fs = std::filesystem;

// The programs the tests' jobs run (a job may call the CLI).
constexpr const char* kJobPrograms[] = {"toy_trainer", "orchestrate"};

// Whether `user` may search every directory from / down to `dir` and run `dir`/name, by the
// mode bits (owner, group, others; the tests make no ACLs).
bool reachable_by(const passwd& user, const std::string& dir) {
  auto allows = [&](const struct stat& st, mode_t owner_bit, mode_t group_bit, mode_t other_bit) {
    if (st.st_uid == user.pw_uid) return (st.st_mode & owner_bit) != 0;
    if (st.st_gid == user.pw_gid) return (st.st_mode & group_bit) != 0;
    return (st.st_mode & other_bit) != 0;
  };
  fs::path so_far;
  for (const fs::path& part : fs::path(dir).lexically_normal()) {
    so_far /= part;
    struct stat st {};
    if (stat(so_far.c_str(), &st) != 0 || !allows(st, S_IXUSR, S_IXGRP, S_IXOTH)) return false;
  }
  for (const char* program : kJobPrograms) {
    struct stat st {};
    const std::string path = dir + "/" + program;
    if (stat(path.c_str(), &st) != 0 || !allows(st, S_IXUSR, S_IXGRP, S_IXOTH)) return false;
  }
  return true;
}

// The copy of the job programs, removed when the process exits.
struct StagedBin {
  std::string dir;
  ~StagedBin() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

std::string stage_bin() {
  static StagedBin staged;
  std::string tmpl = "/tmp/orch-job-bin-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return ORCH_BIN_DIR;  // the job then says what failed
  staged.dir = tmpl;
  std::error_code ec;
  fs::permissions(staged.dir, fs::perms(0755), ec);
  for (const char* program : kJobPrograms) {
    fs::copy_file(std::string(ORCH_BIN_DIR) + "/" + program, staged.dir + "/" + program, ec);
    fs::permissions(staged.dir + "/" + program, fs::perms(0755), ec);
  }
  return staged.dir;
}

}  // namespace

std::string job_user() {
  if (geteuid() != 0) return "";
  return getpwnam("orchestrate-job") != nullptr ? "orchestrate-job" : "nobody";
}

std::string local_run_as_yaml() {
  const std::string user = job_user();
  return user.empty() ? "" : ", local: {run_as: " + user + "}";
}

std::string job_bin_dir() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    const std::string user = job_user();
    const passwd* pw = user.empty() ? nullptr : getpwnam(user.c_str());
    dir = pw == nullptr || reachable_by(*pw, ORCH_BIN_DIR) ? ORCH_BIN_DIR : stage_bin();
  });
  return dir;
}

void open_to_jobs(const std::string& dir) {
  struct stat st {};
  if (geteuid() != 0 || stat(dir.c_str(), &st) != 0) return;
  (void)chmod(dir.c_str(), (st.st_mode & 07777) | S_IXOTH);
}

}  // namespace orch::testkit
