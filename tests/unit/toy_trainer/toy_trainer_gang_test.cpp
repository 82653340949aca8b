// Runs the real toy_trainer as a gang of processes on 127.0.0.1, each with the launch
// contract's variables (docs/launch-contract.md), and checks the multi-rank behaviour: the
// rendezvous, the all-reduce keeping every rank's model identical, and how the gang fails when a
// rank dies, straggles, deadlocks or cannot reach its master. Timings are asserted as order and
// generous bounds, never tightly: the suite shares two cores with the rest of the build.

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scheduler/model/progress_line.h"
#include "tests/unit/toy_trainer/toy_trainer_test_util.h"

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Env = std::map<std::string, std::string>;

constexpr auto kGangLimit = std::chrono::seconds(20);  // a bug must not hang the suite
constexpr const char* kRankStepPrefix = "toy_trainer: rank-step ";

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// A port nothing listens on right now: bind port 0 and let the kernel pick.
int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(s);
  return ntohs(a.sin_port);
}

struct Rank {
  pid_t pid = -1;
  int out = -1, err = -1;  // read ends, -1 once closed
  std::string partial;
  std::vector<std::string> lines;  // stdout
  std::string err_text;
  int status = 0;
  bool reaped = false;
  Clock::time_point exited_at;
  bool exited(int code) const { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
  bool killed_by(int sig) const { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }
};

// The variables every rank gets, as the launch contract sets them (torch names left out: the
// trainer reads ORCH_* first).
Env gang_env(int rank, int world, int port) {
  return {{"ORCH_TASK_RANK", std::to_string(rank)},
          {"ORCH_NTASKS", std::to_string(world)},
          {"ORCH_NODE_RANK", std::to_string(rank)},
          {"ORCH_NNODES", std::to_string(world)},
          {"ORCH_LOCAL_RANK", "0"},
          {"ORCH_NODE_NAME", "node-" + std::to_string(rank)},
          {"ORCH_MASTER_ADDR", "127.0.0.1"},
          {"ORCH_MASTER_PORT", std::to_string(port)}};
}

void spawn(const std::vector<std::string>& args, const Env& env, Rank& r) {
  int out[2], err[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(err, O_CLOEXEC), 0);
  r.pid = ::fork();
  if (r.pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (const char* v : {"ORCH_RESUME_FROM", "ORCH_ATTEMPT", "ORCH_TASK_RANK", "ORCH_NTASKS",
                          "RANK", "WORLD_SIZE", "ORCH_MASTER_ADDR", "ORCH_MASTER_PORT",
                          "MASTER_ADDR", "MASTER_PORT", "SLURMD_NODENAME", "ORCH_NODE_NAME"}) {
      ::unsetenv(v);
    }
    toy_test::exec_toy_trainer(args, env);
  }
  ::close(out[1]);
  ::close(err[1]);
  r.out = out[0];
  r.err = err[0];
}

// `world` toy_trainer processes with the same flags, run until all have exited. Hooks see every
// stdout line as it comes and every exit, and may signal ranks.
class Gang {
 public:
  using OnLine = std::function<void(Gang&, int rank, const std::string& line)>;
  using OnExit = std::function<void(Gang&, int rank)>;

  Gang(int world, const std::vector<std::string>& args, const std::map<int, Env>& extra = {})
      : port_(free_port()), ranks_(static_cast<std::size_t>(world)) {
    for (int r = 0; r < world; ++r) {
      Env env = gang_env(r, world, port_);
      if (auto it = extra.find(r); it != extra.end()) {
        for (const auto& [k, v] : it->second) env[k] = v;
      }
      spawn(args, env, ranks_[r]);
    }
  }

  void run(const OnLine& on_line = {}, const OnExit& on_exit = {});
  Rank& operator[](int r) { return ranks_[r]; }
  int world() const { return static_cast<int>(ranks_.size()); }
  void kill(int r, int sig) {
    if (!ranks_[r].reaped) ::kill(ranks_[r].pid, sig);
  }
  bool running(int r) const { return !ranks_[r].reaped; }

 private:
  void read_pipe(int r, bool is_out, const OnLine& on_line);

  int port_;
  std::vector<Rank> ranks_;
};

void Gang::read_pipe(int r, bool is_out, const OnLine& on_line) {
  Rank& k = ranks_[r];
  int& fd = is_out ? k.out : k.err;
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n <= 0) {
    ::close(fd);
    fd = -1;
    return;
  }
  if (!is_out) {
    k.err_text.append(buf, static_cast<std::size_t>(n));
    return;
  }
  k.partial.append(buf, static_cast<std::size_t>(n));
  for (std::size_t nl; (nl = k.partial.find('\n')) != std::string::npos;) {
    k.lines.push_back(k.partial.substr(0, nl));
    k.partial.erase(0, nl + 1);
    if (on_line) on_line(*this, r, k.lines.back());
  }
}

void Gang::run(const OnLine& on_line, const OnExit& on_exit) {
  const auto deadline = Clock::now() + kGangLimit;
  bool timed_out = false;
  while (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& k) { return !k.reaped; })) {
    std::vector<pollfd> fds;
    std::vector<std::pair<int, bool>> who;  // rank, stdout?
    for (int r = 0; r < world(); ++r) {
      for (bool is_out : {true, false}) {
        const int fd = is_out ? ranks_[r].out : ranks_[r].err;
        if (fd < 0) continue;
        fds.push_back({fd, POLLIN, 0});
        who.emplace_back(r, is_out);
      }
    }
    ::poll(fds.data(), fds.size(), 50);
    if (!timed_out && Clock::now() > deadline) {
      timed_out = true;
      ADD_FAILURE() << "the gang did not finish within 20 s";
      for (int r = 0; r < world(); ++r) kill(r, SIGKILL);
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents) read_pipe(who[i].first, who[i].second, on_line);
    }
    for (int r = 0; r < world(); ++r) {
      Rank& k = ranks_[r];
      if (k.reaped || k.out >= 0 || k.err >= 0) continue;
      ::waitpid(k.pid, &k.status, 0);  // its pipes are closed: it has exited
      k.reaped = true;
      k.exited_at = Clock::now();
      if (on_exit) on_exit(*this, r);
    }
  }
}

struct RankStep {
  int rank = -1;
  std::int64_t step = 0;
  double compute_s = 0, step_time_s = 0;
};

std::vector<RankStep> rank_steps(const Rank& k) {
  std::vector<RankStep> out;
  for (const auto& l : k.lines) {
    if (l.rfind(kRankStepPrefix, 0) != 0) continue;
    const auto j = nlohmann::json::parse(l.substr(std::string(kRankStepPrefix).size()));
    out.push_back({j.at("rank").get<int>(), j.at("step").get<std::int64_t>(),
                   j.at("compute_s").get<double>(), j.at("step_time_s").get<double>()});
  }
  return out;
}

struct Protocol {
  std::vector<orch::ProgressReport> progress;
  std::vector<orch::CheckpointReport> ckpts;
};

// The @orchestrate lines of a rank; each must be valid.
Protocol protocol(const Rank& k) {
  Protocol p;
  for (const auto& l : k.lines) {
    auto r = orch::parse_progress_line(l);
    if (!r) continue;
    EXPECT_TRUE(r->ok()) << "bad protocol line: " << l;
    if (!r->ok()) continue;
    if (auto* pr = std::get_if<orch::ProgressReport>(&**r)) {
      p.progress.push_back(*pr);
    } else {
      p.ckpts.push_back(std::get<orch::CheckpointReport>(**r));
    }
  }
  return p;
}

std::string checksum(const Rank& k) {
  std::smatch m;
  static const std::regex re("final checksum ([0-9a-f]{16})");
  return std::regex_search(k.err_text, m, re) ? m[1].str() : std::string("none");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

const std::vector<std::string> kSmall = {"--dim", "16", "--batch", "8"};

// Rank 0 of a world of two, with `env` on top.
Env world_of_two(Env env) {
  env.emplace("ORCH_NTASKS", "2");
  return env;
}

class ToyTrainerGangTest : public toy_test::TempDirTest {
 protected:
};

TEST_F(ToyTrainerGangTest, ThreeRanksTrainInLockstepAndEndIdentical) {
  Gang g(3, with(kSmall, {"--steps", "20"}));
  g.run();
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_TRUE(g[r].exited(0)) << g[r].err_text;
    EXPECT_TRUE(contains(g[r].err_text, "toy_trainer: rank " + std::to_string(r) + "/3 node " +
                                            std::to_string(r) + "/3 local 0 master " +
                                            "127.0.0.1:"))
        << g[r].err_text;
    EXPECT_TRUE(contains(g[r].err_text, "node_name node-" + std::to_string(r))) << g[r].err_text;
    EXPECT_EQ(checksum(g[r]), checksum(g[0]));
    const auto steps = rank_steps(g[r]);
    ASSERT_EQ(steps.size(), 20u);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(steps[i].rank, r);
      EXPECT_EQ(steps[i].step, static_cast<std::int64_t>(i + 1));
      EXPECT_LE(steps[i].compute_s, steps[i].step_time_s);
    }
    if (r > 0) {
      EXPECT_TRUE(protocol(g[r]).progress.empty()) << "only rank 0 reports progress";
    }
  }
  EXPECT_NE(checksum(g[0]), "none");
  const auto p = protocol(g[0]);
  ASSERT_EQ(p.progress.size(), 20u);
  for (std::size_t i = 0; i < p.progress.size(); ++i) {
    EXPECT_EQ(p.progress[i].step, static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(p.progress[i].tokens, 3 * 8) << "the whole gang's tokens";
    EXPECT_TRUE(p.progress[i].ranks.empty()) << "no --report-ranks";
  }
  EXPECT_LT(*p.progress.back().loss, *p.progress.front().loss) << "the gang should learn";
}

TEST_F(ToyTrainerGangTest, ResumedGangMatchesAnUninterruptedOne) {
  const std::string dir = (tmp_ / "ck").string();
  Gang first(3, with(kSmall, {"--steps", "10", "--ckpt-dir", dir, "--ckpt-every", "5"}));
  first.run();
  for (int r = 0; r < 3; ++r) ASSERT_TRUE(first[r].exited(0)) << first[r].err_text;
  EXPECT_EQ(protocol(first[0]).ckpts.size(), 2u);
  EXPECT_TRUE(protocol(first[1]).ckpts.empty()) << "only rank 0 saves";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"step-10.ckpt", "step-5.ckpt"}));

  const Env resume = {{"ORCH_RESUME_FROM", dir + "/step-10.ckpt"}};
  Gang second(3, with(kSmall, {"--steps", "16"}), {{0, resume}, {1, resume}, {2, resume}});
  second.run();
  Gang whole(3, with(kSmall, {"--steps", "16"}));
  whole.run();
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(second[r].exited(0)) << second[r].err_text;
    ASSERT_TRUE(whole[r].exited(0)) << whole[r].err_text;
    EXPECT_EQ(rank_steps(second[r]).front().step, 11);
    EXPECT_EQ(checksum(second[r]), checksum(whole[0])) << "rank " << r;
  }
  EXPECT_NE(checksum(whole[0]), "none");
}

TEST_F(ToyTrainerGangTest, KilledRankMakesThePeersFailAtOnceNamingIt) {
  Clock::time_point killed_at;
  Gang g(3, with(kSmall,
                 {"--steps", "100000", "--step-delay-ms", "10", "--collective-timeout-s", "60"}));
  g.run([&](Gang& gang, int rank, const std::string& line) {
    if (rank == 1 && contains(line, "rank-step {\"rank\":1,\"step\":5,")) {
      gang.kill(1, SIGKILL);
      killed_at = Clock::now();
    }
  });
  ASSERT_TRUE(g[1].killed_by(SIGKILL));
  for (int r : {0, 2}) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_TRUE(g[r].exited(1)) << g[r].status << " " << g[r].err_text;
    EXPECT_LT(seconds_between(killed_at, g[r].exited_at), 10.0) << "not the 60 s watchdog";
    EXPECT_TRUE(
        contains(g[r].err_text, "toy_trainer: rank " + std::to_string(r) + ": all-reduce at step "))
        << g[r].err_text;
    EXPECT_TRUE(contains(g[r].err_text, "rank 1 closed the connection") ||
                contains(g[r].err_text, "connection to rank 1 failed"))
        << g[r].err_text;
    EXPECT_FALSE(contains(g[r].err_text, "Watchdog")) << g[r].err_text;
  }
  EXPECT_TRUE(contains(g[2].err_text, "rank 0 aborted the job")) << g[2].err_text;
}

TEST_F(ToyTrainerGangTest, SlowRankHasTheLongestComputeTime) {
  Gang g(3, with(kSmall,
                 {"--steps", "6", "--slow-rank", "1", "--slow-ms", "100", "--report-ranks", "1"}));
  g.run();
  std::map<int, std::vector<double>> compute, total;
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(g[r].exited(0)) << g[r].err_text;
    for (const auto& s : rank_steps(g[r])) {
      compute[r].push_back(s.compute_s);
      total[r].push_back(s.step_time_s);
    }
    ASSERT_EQ(compute[r].size(), 6u);
  }
  const double slowest = *std::min_element(compute[1].begin(), compute[1].end());
  EXPECT_GE(slowest, 0.1) << "rank 1 sleeps 100 ms in every step";
  for (int r : {0, 2}) {
    EXPECT_LT(median(compute[r]), slowest) << "rank " << r;
    EXPECT_GE(median(total[r]), 0.05) << "rank " << r << " waits for the straggler";
  }
  // Rank 0 reports the ranks' compute times in its progress lines, rank 1 the slowest.
  for (const auto& p : protocol(g[0]).progress) {
    ASSERT_EQ(p.ranks.size(), 3u);
    const auto slow = std::max_element(p.ranks.begin(), p.ranks.end(), [](auto& a, auto& b) {
      return a.step_time_s < b.step_time_s;
    });
    EXPECT_EQ(slow->rank, 1);
    EXPECT_EQ(slow->node, "node-1");
  }
}

TEST_F(ToyTrainerGangTest, DeadlockFailsRankZeroAfterTheCollectiveTimeoutNotBefore) {
  std::optional<Clock::time_point> last_line_at;
  bool others_alive_when_rank0_exited = false;
  Gang g(3,
         with(kSmall, {"--steps", "50", "--deadlock-at-step", "4", "--collective-timeout-s", "3"}));
  g.run(
      [&](Gang&, int rank, const std::string& line) {
        if (rank == 0 && contains(line, "\"event\":\"progress\"")) last_line_at = Clock::now();
      },
      [&](Gang& gang, int rank) {
        if (rank != 0) return;
        others_alive_when_rank0_exited = gang.running(1) && gang.running(2);
        gang.kill(1, SIGKILL);  // deadlocked: they ignore SIGTERM and never exit on their own
        gang.kill(2, SIGKILL);
      });
  ASSERT_TRUE(g[0].exited(1)) << g[0].status << " " << g[0].err_text;
  EXPECT_TRUE(others_alive_when_rank0_exited);
  ASSERT_TRUE(last_line_at.has_value());
  // The watchdog starts after the step-3 line was printed: at least 3 s minus however late
  // this test read that line.
  EXPECT_GE(seconds_between(*last_line_at, g[0].exited_at), 2.0);
  EXPECT_TRUE(contains(g[0].err_text,
                       "all-reduce at step 4 failed: Watchdog caught collective "
                       "operation timeout: ran for 3 s"))
      << g[0].err_text;
  EXPECT_TRUE(contains(g[0].err_text, "with no tensor from ranks 1, 2")) << g[0].err_text;
  EXPECT_EQ(protocol(g[0]).progress.back().step, 3) << "nothing printed after the deadlock";
  for (int r : {1, 2}) {
    EXPECT_TRUE(g[r].killed_by(SIGKILL));
    EXPECT_EQ(rank_steps(g[r]).back().step, 3);
  }
}

TEST_F(ToyTrainerGangTest, UnreachableMasterFailsAfterTheRendezvousTimeoutNamingIt) {
  const int port = free_port();  // nobody listens there
  const auto start = Clock::now();
  Gang g(1, with(kSmall, {"--rendezvous-timeout-s", "1"}),
         {{0,
           {{"ORCH_TASK_RANK", "1"},
            {"ORCH_NTASKS", "2"},
            {"ORCH_MASTER_PORT", std::to_string(port)}}}});
  g.run();
  EXPECT_TRUE(g[0].exited(1)) << g[0].status << " " << g[0].err_text;
  EXPECT_GE(seconds_between(start, g[0].exited_at), 1.0) << "it retries until the timeout";
  EXPECT_TRUE(contains(g[0].err_text,
                       "rank 1: rendezvous failed: cannot reach the master at "
                       "127.0.0.1:" +
                           std::to_string(port) + " within 1 s"))
      << g[0].err_text;
  EXPECT_TRUE(g[0].lines.empty());
}

TEST_F(ToyTrainerGangTest, MissingRankFailsRankZeroAfterTheRendezvousTimeout) {
  const auto start = Clock::now();
  Gang g(1, with(kSmall, {"--rendezvous-timeout-s", "1"}), {{0, {{"ORCH_NTASKS", "3"}}}});
  g.run();
  EXPECT_TRUE(g[0].exited(1)) << g[0].status << " " << g[0].err_text;
  EXPECT_GE(seconds_between(start, g[0].exited_at), 1.0);
  EXPECT_TRUE(contains(g[0].err_text, "only 0 of 2 ranks arrived")) << g[0].err_text;
  EXPECT_TRUE(contains(g[0].err_text, "missing ranks 1, 2")) << g[0].err_text;
}

TEST_F(ToyTrainerGangTest, WorldSizesMustAgree) {
  // Rank 1 thinks the world has 3 ranks, rank 0 that it has 2.
  Gang g(2, with(kSmall, {"--steps", "5", "--rendezvous-timeout-s", "10"}),
         {{1, {{"ORCH_NTASKS", "3"}}}});
  g.run();
  EXPECT_TRUE(g[0].exited(1)) << g[0].err_text;
  EXPECT_TRUE(g[1].exited(1)) << g[1].err_text;
  EXPECT_TRUE(contains(g[0].err_text, "says the world has 3 ranks, rank 0 says 2"))
      << g[0].err_text;
  EXPECT_TRUE(contains(g[1].err_text, "rank 0 at 127.0.0.1:")) << g[1].err_text;
  EXPECT_TRUE(contains(g[1].err_text, "aborted the job")) << g[1].err_text;
}

TEST_F(ToyTrainerGangTest, BadLaunchVariablesExit2BeforeAnyNetworking) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"ORCH_MASTER_ADDR", ""}, {"MASTER_ADDR", ""}}, "ORCH_MASTER_ADDR"},
      {{{"ORCH_MASTER_PORT", "70000"}}, "ORCH_MASTER_PORT must be a port"},
      {{{"ORCH_TASK_RANK", "3"}}, "ORCH_TASK_RANK must be a rank in [0, 1]"},
  };
  for (const auto& [env, message] : cases) {
    Gang g(1, kSmall, {{0, world_of_two(env)}});
    g.run();
    EXPECT_TRUE(g[0].exited(2)) << message << ": " << g[0].err_text;
    EXPECT_TRUE(contains(g[0].err_text, message)) << g[0].err_text;
  }
  Gang slow(1, with(kSmall, {"--slow-rank", "5"}), {{0, {{"ORCH_NTASKS", "2"}}}});
  slow.run();
  EXPECT_TRUE(slow[0].exited(2));
  EXPECT_TRUE(contains(slow[0].err_text, "--slow-rank 5 is not a rank")) << slow[0].err_text;
}

TEST_F(ToyTrainerGangTest, SigtermOnOneRankStopsTheGangAfterTheSameStep) {
  const std::string dir = (tmp_ / "ck").string();
  bool sent = false;
  Gang g(3, with(kSmall, {"--steps", "100000", "--step-delay-ms", "10", "--ckpt-dir", dir,
                          "--ckpt-every", "100000"}));
  g.run([&](Gang& gang, int rank, const std::string& line) {
    if (!sent && rank == 2 && contains(line, "\"step\":5,")) {
      gang.kill(2, SIGTERM);
      sent = true;
    }
  });
  const auto p = protocol(g[0]);
  ASSERT_FALSE(p.progress.empty());
  const std::int64_t last = p.progress.back().step;
  EXPECT_GE(last, 5);
  ASSERT_EQ(p.ckpts.size(), 1u) << "rank 0 saves the step the gang stopped after";
  EXPECT_EQ(p.ckpts[0].step, last);
  EXPECT_TRUE(fs::exists(p.ckpts[0].path));
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_TRUE(g[r].exited(143)) << g[r].status << " " << g[r].err_text;
    EXPECT_EQ(rank_steps(g[r]).back().step, last);
    EXPECT_EQ(checksum(g[r]), checksum(g[0]));
  }
  EXPECT_TRUE(contains(g[0].err_text, "another rank got SIGTERM")) << g[0].err_text;
}

}  // namespace
