// Runs the real toy_trainer binary as a subprocess and checks what it prints and writes.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/model/progress_line.h"
#include "tests/unit/toy_trainer/toy_trainer_test_util.h"

namespace {
namespace fs = std::filesystem;

struct RunResult {
  int status = 0;  // raw waitpid status
  std::vector<std::string> lines;
  std::string err;
  bool exited(int code) const { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
  bool killed_by(int sig) const { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }
};

// Runs toy_trainer with args and extra env; on_line is called for every stdout line with the
// child's pid. Kills the child after 20 s so a bug cannot hang the suite.
RunResult run_trainer(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env = {},
                      const std::function<void(const std::string&, pid_t)>& on_line = {}) {
  int out[2], err[2];
  EXPECT_EQ(::pipe(out), 0);
  EXPECT_EQ(::pipe(err), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(err[0]);
    ::unsetenv("ORCH_RESUME_FROM");
    ::unsetenv("ORCH_ATTEMPT");
    toy_test::exec_toy_trainer(args, env);
  }
  ::close(out[1]);
  ::close(err[1]);
  RunResult r;
  std::string partial;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[2] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
    int n = ::poll(fds, 2, 100);
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ADD_FAILURE() << "toy_trainer timed out";
      break;
    }
    if (n <= 0) continue;
    char buf[4096];
    if (fds[0].revents) {
      ssize_t k = ::read(out[0], buf, sizeof buf);
      if (k <= 0) {
        out_open = false;
      } else {
        partial.append(buf, static_cast<std::size_t>(k));
        for (std::size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
          r.lines.push_back(partial.substr(0, nl));
          partial.erase(0, nl + 1);
          if (on_line) on_line(r.lines.back(), pid);
        }
      }
    }
    if (fds[1].revents) {
      ssize_t k = ::read(err[0], buf, sizeof buf);
      if (k <= 0)
        err_open = false;
      else
        r.err.append(buf, static_cast<std::size_t>(k));
    }
  }
  ::close(out[0]);
  ::close(err[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

struct Parsed {
  std::vector<orch::ProgressReport> progress;
  std::vector<orch::CheckpointReport> ckpts;
};

Parsed parse(const std::vector<std::string>& lines) {
  Parsed p;
  for (const auto& l : lines) {
    auto r = orch::parse_progress_line(l);
    EXPECT_TRUE(r.has_value()) << "not a protocol line: " << l;
    if (!r) continue;
    EXPECT_TRUE(r->ok()) << "bad protocol line: " << l;
    if (!r->ok()) continue;
    if (auto* pr = std::get_if<orch::ProgressReport>(&**r))
      p.progress.push_back(*pr);
    else
      p.ckpts.push_back(std::get<orch::CheckpointReport>(**r));
  }
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ToyTrainerTest : public toy_test::TempDirTest {
 protected:
  std::vector<std::string> base(const std::string& dir, int steps, int every) {
    return {"--dim",        "16",
            "--batch",      "8",
            "--steps",      std::to_string(steps),
            "--ckpt-dir",   (tmp_ / dir).string(),
            "--ckpt-every", std::to_string(every)};
  }
  std::vector<std::string> files(const std::string& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tmp_ / dir)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(ToyTrainerTest, ProgressLinesAreValidAndConsecutive) {
  auto r = run_trainer({"--dim", "16", "--batch", "8", "--steps", "25"});
  ASSERT_TRUE(r.exited(0)) << r.err;
  auto p = parse(r.lines);
  ASSERT_EQ(p.progress.size(), 25u);
  EXPECT_TRUE(p.ckpts.empty());
  for (std::size_t i = 0; i < p.progress.size(); ++i) {
    EXPECT_EQ(p.progress[i].step, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(p.progress[i].tokens, 8);
    ASSERT_TRUE(p.progress[i].step_time_s.has_value());
    EXPECT_GT(*p.progress[i].step_time_s, 0.0);
    ASSERT_TRUE(p.progress[i].loss.has_value());
  }
  EXPECT_LT(*p.progress.back().loss, *p.progress.front().loss) << "the toy model should learn";
}

TEST_F(ToyTrainerTest, CheckpointsEveryNKeepsNewestThree) {
  auto r = run_trainer(base("ck", 50, 10));
  ASSERT_TRUE(r.exited(0)) << r.err;
  auto p = parse(r.lines);
  ASSERT_EQ(p.ckpts.size(), 5u);
  for (std::size_t i = 0; i < p.ckpts.size(); ++i) {
    EXPECT_EQ(p.ckpts[i].step, static_cast<std::int64_t>(10 * (i + 1)));
    EXPECT_TRUE(fs::path(p.ckpts[i].path).is_absolute()) << p.ckpts[i].path;
    EXPECT_EQ(fs::path(p.ckpts[i].path).filename(),
              "step-" + std::to_string(10 * (i + 1)) + ".ckpt");
    EXPECT_TRUE(p.ckpts[i].save_time_s.has_value());
  }
  // Only the newest three remain, and no temp files are left behind.
  EXPECT_EQ(files("ck"),
            (std::vector<std::string>{"step-30.ckpt", "step-40.ckpt", "step-50.ckpt"}));
  EXPECT_EQ(fs::file_size(p.ckpts.back().path), 32u + 16 * 16 * 4 + 8);
}

TEST_F(ToyTrainerTest, ResumeContinuesAndMatchesUninterruptedRun) {
  auto full = run_trainer(base("full", 40, 10));
  ASSERT_TRUE(full.exited(0)) << full.err;
  auto pf = parse(full.lines);

  auto first = run_trainer(base("part", 20, 10));
  ASSERT_TRUE(first.exited(0)) << first.err;
  const std::string ckpt = (tmp_ / "part" / "step-20.ckpt").string();
  std::vector<std::string> args = base("part", 40, 10);
  auto second = run_trainer(args, {{"ORCH_RESUME_FROM", ckpt}});
  ASSERT_TRUE(second.exited(0)) << second.err;
  auto ps = parse(second.lines);
  ASSERT_EQ(ps.progress.size(), 20u);
  EXPECT_EQ(ps.progress.front().step, 21);
  EXPECT_EQ(ps.progress.back().step, 40);
  // Same losses step for step, and byte-identical final weights.
  for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(ps.progress[i].loss, pf.progress[20 + i].loss);
  EXPECT_EQ(slurp(tmp_ / "part" / "step-40.ckpt"), slurp(tmp_ / "full" / "step-40.ckpt"));
}

TEST_F(ToyTrainerTest, ResumeEnvNameIsConfigurable) {
  ASSERT_TRUE(run_trainer(base("c", 10, 5)).exited(0));
  auto args = base("c", 12, 5);
  args.insert(args.end(), {"--resume-env", "MY_RESUME"});
  auto r = run_trainer(args, {{"MY_RESUME", (tmp_ / "c" / "step-10.ckpt").string()}});
  ASSERT_TRUE(r.exited(0)) << r.err;
  auto p = parse(r.lines);
  ASSERT_EQ(p.progress.size(), 2u);
  EXPECT_EQ(p.progress.front().step, 11);
}

TEST_F(ToyTrainerTest, CorruptCheckpointExits65) {
  ASSERT_TRUE(run_trainer(base("c", 10, 10)).exited(0));
  const fs::path ck = tmp_ / "c" / "step-10.ckpt";
  std::string bytes = slurp(ck);
  bytes[40] ^= 0x01;  // a bit in the weights
  std::ofstream(ck, std::ios::binary | std::ios::trunc) << bytes;
  auto r = run_trainer(base("c", 20, 10), {{"ORCH_RESUME_FROM", ck.string()}});
  EXPECT_TRUE(r.exited(65)) << r.status;
  EXPECT_NE(r.err.find("checksum mismatch"), std::string::npos) << r.err;
  EXPECT_TRUE(r.lines.empty()) << "must never start from scratch";
}

TEST_F(ToyTrainerTest, TruncatedCheckpointExits65) {
  ASSERT_TRUE(run_trainer(base("c", 10, 10)).exited(0));
  const fs::path ck = tmp_ / "c" / "step-10.ckpt";
  fs::resize_file(ck, fs::file_size(ck) - 100);
  auto r = run_trainer(base("c", 20, 10), {{"ORCH_RESUME_FROM", ck.string()}});
  EXPECT_TRUE(r.exited(65)) << r.status;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_TRUE(r.lines.empty());
}

TEST_F(ToyTrainerTest, WrongDimOrMissingCheckpointExits65) {
  ASSERT_TRUE(run_trainer(base("c", 10, 10)).exited(0));
  const std::string ck = (tmp_ / "c" / "step-10.ckpt").string();
  auto r = run_trainer({"--dim", "8", "--steps", "20"}, {{"ORCH_RESUME_FROM", ck}});
  EXPECT_TRUE(r.exited(65));
  EXPECT_NE(r.err.find("--dim"), std::string::npos) << r.err;
  auto missing = run_trainer({"--dim", "8"}, {{"ORCH_RESUME_FROM", ck + ".nope"}});
  EXPECT_TRUE(missing.exited(65));
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
}

TEST_F(ToyTrainerTest, CrashAtStepExits3) {
  auto r = run_trainer({"--dim", "8", "--steps", "20", "--crash-at-step", "7"});
  EXPECT_TRUE(r.exited(3)) << r.status;
  auto p = parse(r.lines);
  ASSERT_FALSE(p.progress.empty());
  EXPECT_EQ(p.progress.back().step, 7);
}

TEST_F(ToyTrainerTest, FaultAttemptLimitsHooksToOneAttempt) {
  std::vector<std::string> args = {"--dim",           "8", "--steps",         "10",
                                   "--crash-at-step", "3", "--fault-attempt", "1"};
  EXPECT_TRUE(run_trainer(args, {{"ORCH_ATTEMPT", "1"}}).exited(3));
  EXPECT_TRUE(run_trainer(args, {{"ORCH_ATTEMPT", "2"}}).exited(0));
}

TEST_F(ToyTrainerTest, SignalAtStepIsKilledBySigkill) {
  auto r = run_trainer({"--dim", "8", "--steps", "20", "--signal-at-step", "5"});
  EXPECT_TRUE(r.killed_by(SIGKILL)) << r.status;
  EXPECT_EQ(parse(r.lines).progress.back().step, 5);
}

TEST_F(ToyTrainerTest, HangAtStepStopsPrinting) {
  auto r = run_trainer({"--dim", "8", "--steps", "20", "--hang-at-step", "4"}, {},
                       [](const std::string& line, pid_t pid) {
                         if (line.find("\"step\":4") != std::string::npos) {
                           ::usleep(200'000);     // still hung, nothing more printed
                           ::kill(pid, SIGTERM);  // ignored while hung
                           ::usleep(100'000);
                           ::kill(pid, SIGKILL);
                         }
                       });
  EXPECT_TRUE(r.killed_by(SIGKILL)) << r.status;
  EXPECT_EQ(r.lines.size(), 4u);
}

TEST_F(ToyTrainerTest, SigtermSavesCheckpointAndExits143) {
  auto args = base("t", 100000, 1000);
  args.insert(args.end(), {"--step-delay-ms", "5"});
  bool sent = false;
  auto r = run_trainer(args, {}, [&](const std::string& line, pid_t pid) {
    if (!sent && line.find("\"step\":5,") != std::string::npos) {
      ::kill(pid, SIGTERM);
      sent = true;
    }
  });
  EXPECT_TRUE(r.exited(143)) << r.status << " " << r.err;
  auto p = parse(r.lines);
  ASSERT_EQ(p.ckpts.size(), 1u);
  ASSERT_FALSE(p.progress.empty());
  EXPECT_EQ(p.ckpts[0].step, p.progress.back().step);
  EXPECT_GE(p.ckpts[0].step, 5);
  EXPECT_TRUE(fs::exists(p.ckpts[0].path));
  EXPECT_EQ(files("t").size(), 1u) << "no temp files";
}

TEST_F(ToyTrainerTest, BadFlagsExit2WithUsage) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--bogus", "1"}, {"--steps", "ten"}, {"--dim"}, {"--ckpt-every", "5"}, {"stray"}}) {
    auto r = run_trainer(args);
    EXPECT_TRUE(r.exited(2)) << args[0] << " status " << r.status;
    EXPECT_NE(r.err.find("usage:"), std::string::npos) << r.err;
  }
}

}  // namespace
