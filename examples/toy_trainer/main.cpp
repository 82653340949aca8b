// toy_trainer: a tiny but real training loop for demos and tests of orchestrate. It speaks the
// progress protocol (docs/progress-protocol.md), saves atomic checksummed checkpoints, resumes
// from the checkpoint named by $ORCH_RESUME_FROM, and can fail on purpose (crash, SIGKILL,
// hang, deadlock, straggler) at a chosen step. Started as one rank of several (the launch
// contract's ORCH_TASK_RANK/ORCH_NTASKS, docs/launch-contract.md) it trains data-parallel: the
// ranks meet at the master address and all-reduce their gradients over TCP every step.
// Flags, exit codes and the multi-rank protocol: examples/toy_trainer/README.md.

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "examples/toy_trainer/allreduce.h"
#include "examples/toy_trainer/checkpoint.h"
#include "examples/toy_trainer/launch_env.h"
#include "examples/toy_trainer/model.h"
#include "examples/toy_trainer/options.h"
#include "examples/toy_trainer/rendezvous.h"
#include "scheduler/model/progress_line.h"

namespace {

using toy::Options;

constexpr int kExitPeer = 1;  // the rendezvous or an all-reduce failed (a peer, the network)
constexpr int kExitCrash = 3;
constexpr int kExitData = 65;
constexpr int kExitIo = 74;
constexpr int kExitTerm = 143;

// Per-rank step times. Not an "@orchestrate " line: the scheduler's parser rejects events it
// does not know (scheduler/model/progress_line.cpp), so these are plain log lines for now.
constexpr const char* kRankStepPrefix = "toy_trainer: rank-step ";

volatile sig_atomic_t g_term = 0;
extern "C" void on_term(int) {
  g_term = 1;
}
// SIGUSR1: a save request (orchestrate preempting the job for one of higher priority): rank 0
// saves after the current step and training goes on.
volatile sig_atomic_t g_save = 0;
extern "C" void on_save(int) {
  g_save = 1;
}

void emit(const orch::ProgressLine& line) {
  const std::string s = orch::format_progress_line(line) + "\n";
  std::fputs(s.c_str(), stdout);
  std::fflush(stdout);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Sleeps up to ms, returning early when SIGTERM arrives (nanosleep gets EINTR).
void sleep_ms(std::int64_t ms) {
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1'000'000)};
  while (!g_term && ::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

[[noreturn]] void hang_forever() {
  signal(SIGTERM, SIG_IGN);  // a deadlocked job does not answer; only SIGKILL ends it
  for (;;) ::pause();
}

void save(const Options& o, const toy::Model& m, std::int64_t step) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string path;
  try {
    path = toy::save_checkpoint(o.ckpt_dir, step, m.dim(), m.weights());
    if (o.keep_ckpts > 0) toy::prune_checkpoints(o.ckpt_dir, static_cast<int>(o.keep_ckpts));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "toy_trainer: checkpoint at step %lld failed: %s\n",
                 static_cast<long long>(step), e.what());
    std::exit(kExitIo);
  }
  orch::CheckpointReport r;
  r.step = step;
  r.path = path;
  r.save_time_s = seconds_since(t0);
  emit(r);
}

// Everything the training loop works with.
struct Run {
  const Options& o;
  const toy::LaunchEnv& env;
  toy::Group group;
  toy::Model model;
  std::unique_ptr<toy::AllReduce> all_reduce;  // world > 1 only
  bool attempt_faults = true;                  // --fault-attempt matches (or is not given)
  bool rank_faults = true;       // ... and --fault-rank is this rank (or is not given)
  bool checkpointing = false;    // rank 0 with --ckpt-dir and --ckpt-every > 0
  std::int64_t done = 0;         // last completed step
  std::int64_t last_saved = -1;  // step of the last checkpoint this run wrote
};

toy::LaunchEnv launch_env_or_exit(const Options& o) {
  toy::LaunchEnv env;
  std::string error;
  if (!toy::read_launch_env(env, error)) {
    std::fprintf(stderr, "toy_trainer: %s\n", error.c_str());
    std::exit(toy::kExitUsage);
  }
  for (const auto& [flag, rank] :
       {std::pair{"--slow-rank", o.slow_rank}, std::pair{"--fault-rank", o.fault_rank}}) {
    if (rank && *rank >= env.world) {
      toy::usage_error(std::string(flag) + " " + std::to_string(*rank) + " is not a rank of " +
                       "this world of " + std::to_string(env.world));
    }
  }
  if (env.from_env) std::fprintf(stderr, "toy_trainer: %s\n", toy::describe(env).c_str());
  return env;
}

void meet_or_exit(Run& r) {
  std::string error;
  switch (toy::rendezvous(r.env, r.o.rendezvous_timeout_s, g_term, r.group, error)) {
    case toy::Met::ok:
      break;
    case toy::Met::interrupted:
      std::fprintf(stderr, "toy_trainer: rank %d: SIGTERM during the rendezvous\n", r.env.rank);
      std::exit(kExitTerm);
    case toy::Met::failed:
      std::fprintf(stderr, "toy_trainer: rank %d: rendezvous failed: %s\n", r.env.rank,
                   error.c_str());
      std::exit(kExitPeer);
  }
  if (r.group.world > 1) {
    r.all_reduce = std::make_unique<toy::AllReduce>(r.group, r.o.collective_timeout_s,
                                                    r.model.gradient().size());
  }
}

void resume_or_exit(Run& r) {
  const char* from = std::getenv(r.o.resume_env.c_str());
  if (!from || !*from) return;
  toy::Loaded loaded;
  std::string error;
  if (!toy::load_checkpoint(from, r.o.dim, loaded, error)) {
    std::fprintf(stderr, "toy_trainer: cannot resume from $%s: %s\n", r.o.resume_env.c_str(),
                 error.c_str());
    std::exit(kExitData);
  }
  r.model.weights() = std::move(loaded.weights);
  r.done = loaded.step;
  std::fprintf(stderr, "toy_trainer: resumed from %s at step %lld\n", from,
               static_cast<long long>(r.done));
}

// --deadlock-at-step: the ranks > 0 stop taking part and sleep; rank 0 goes on into the
// all-reduce and waits there (for --collective-timeout-s). With one rank there is no
// collective to wait in: it simply hangs.
void maybe_deadlock(const Run& r, std::int64_t step) {
  if (!r.attempt_faults || r.o.deadlock_at != step) return;
  if (r.env.rank == 0 && r.group.world > 1) return;
  std::fprintf(stderr, "toy_trainer: rank %d: deadlocked at step %lld (--deadlock-at-step)\n",
               r.env.rank, static_cast<long long>(step));
  hang_forever();
}

void emit_rank_step(int rank, std::int64_t step, double compute_s, double step_time_s) {
  std::printf("%s{\"rank\":%d,\"step\":%lld,\"compute_s\":%.9g,\"step_time_s\":%.9g}\n",
              kRankStepPrefix, rank, static_cast<long long>(step), compute_s, step_time_s);
  std::fflush(stdout);
}

void emit_progress(const Run& r, std::int64_t step, double step_time_s,
                   const toy::Reduced& reduced) {
  const int world = r.group.world;
  orch::ProgressReport p;
  p.step = step;
  p.tokens = static_cast<std::int64_t>(r.o.batch) * world;
  p.step_time_s = step_time_s;
  p.loss = world == 1 ? reduced.loss_sum : reduced.loss_sum / world;
  if (world > 1 && r.o.report_ranks > 0 && step % r.o.report_ranks == 0) {
    for (int k = 0; k < world; ++k) {
      p.ranks.push_back({k, r.group.nodes[k], std::max(reduced.compute_s[k], 1e-9)});
    }
  }
  emit(p);
}

// One step on this rank: its gradient, the all-reduce, the update, the lines. Returns whether
// the gang stops after this step (SIGTERM on some rank).
bool run_step(Run& r, std::int64_t step) {
  const auto t0 = std::chrono::steady_clock::now();
  const double loss = r.model.compute_gradient(step, r.env.rank);
  if (r.o.slow_rank == r.env.rank) sleep_ms(r.o.slow_ms);
  if (r.o.step_delay_ms > 0) sleep_ms(r.o.step_delay_ms);
  const double compute_s = seconds_since(t0);
  toy::Reduced reduced;
  reduced.loss_sum = loss;
  reduced.stop = g_term != 0;
  if (r.all_reduce) {
    std::string error;
    const toy::Contribution mine{step, loss, compute_s, g_term != 0};
    if (!r.all_reduce->run(mine, r.model.gradient().data(), reduced, error)) {
      std::fprintf(stderr, "toy_trainer: rank %d: all-reduce at step %lld failed: %s\n", r.env.rank,
                   static_cast<long long>(step), error.c_str());
      std::exit(kExitPeer);
    }
  }
  r.model.apply_gradient(1.0f / static_cast<float>(r.group.world));
  const double step_time_s = std::max(seconds_since(t0), 1e-9);
  if (r.group.world > 1) emit_rank_step(r.env.rank, step, compute_s, step_time_s);
  if (r.env.rank == 0) emit_progress(r, step, step_time_s, reduced);
  return reduced.stop;
}

// The crash, SIGKILL and hang hooks, after the step's lines.
void fire_hooks(const Run& r, std::int64_t step) {
  if (!r.attempt_faults || !r.rank_faults) return;
  if (r.o.crash_at == step) {
    std::fprintf(stderr, "toy_trainer: simulated crash at step %lld (--crash-at-step)\n",
                 static_cast<long long>(step));
    std::exit(kExitCrash);
  }
  if (r.o.signal_at == step) {
    std::fprintf(stderr, "toy_trainer: SIGKILL at step %lld (--signal-at-step)\n",
                 static_cast<long long>(step));
    std::raise(SIGKILL);
  }
  if (r.o.hang_at == step) {
    std::fprintf(stderr, "toy_trainer: hanging at step %lld (--hang-at-step)\n",
                 static_cast<long long>(step));
    hang_forever();
  }
}

void print_checksum(const Run& r) {
  const auto& w = r.model.weights();
  const std::uint64_t sum =
      toy::fnv1a64(reinterpret_cast<const unsigned char*>(w.data()), w.size() * sizeof(float));
  std::fprintf(stderr, "toy_trainer: rank %d final checksum %016llx at step %lld\n", r.env.rank,
               static_cast<unsigned long long>(sum), static_cast<long long>(r.done));
}

// The exit code; on a stop, rank 0 saves the step the gang stopped after.
int finish(Run& r, bool stopped) {
  if (stopped && g_term) {
    std::fprintf(stderr, "toy_trainer: SIGTERM after step %lld\n", static_cast<long long>(r.done));
  } else if (stopped) {
    std::fprintf(stderr,
                 "toy_trainer: rank %d: stopping after step %lld: another rank got SIGTERM\n",
                 r.env.rank, static_cast<long long>(r.done));
  }
  // Already saved (and its line printed) when SIGTERM came during that save: nothing to add.
  // Only rank 0 saves; with --ckpt-dir it does even when --ckpt-every is 0.
  if (stopped && r.env.rank == 0 && !r.o.ckpt_dir.empty() && r.done > 0 && r.done != r.last_saved) {
    save(r.o, r.model, r.done);
  }
  if (r.env.from_env) print_checksum(r);
  return stopped ? kExitTerm : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = toy::parse_flags(argc, argv);

  struct sigaction sa {};
  sa.sa_handler = on_term;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: let nanosleep return early
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction save_sa = sa;
  save_sa.sa_handler = on_save;
  sigaction(SIGUSR1, &save_sa, nullptr);

  const toy::LaunchEnv env = launch_env_or_exit(o);
  Run r{o, env, {}, toy::Model(o.dim, o.batch, static_cast<float>(o.lr))};
  meet_or_exit(r);
  resume_or_exit(r);

  if (o.fault_attempt) {
    const char* attempt = std::getenv("ORCH_ATTEMPT");
    r.attempt_faults = attempt && *o.fault_attempt == attempt;
  }
  r.rank_faults = !o.fault_rank || *o.fault_rank == env.rank;
  r.checkpointing = env.rank == 0 && !o.ckpt_dir.empty() && o.ckpt_every.value_or(0) > 0;

  bool stopped = false;  // the gang agreed to stop (one rank: this process got SIGTERM)
  // One rank stops as soon as it sees SIGTERM; several stop together, after the all-reduce
  // that told them all.
  for (std::int64_t step = r.done + 1; step <= o.steps && !stopped; ++step) {
    if (r.group.world == 1 && g_term) break;
    maybe_deadlock(r, step);
    stopped = run_step(r, step);
    r.done = step;
    fire_hooks(r, step);
    const bool asked = g_save != 0;
    if (asked) g_save = 0;
    if (r.env.rank == 0 && !o.ckpt_dir.empty() &&
        ((r.checkpointing && step % *o.ckpt_every == 0) || asked)) {
      if (asked)
        std::fprintf(stderr, "toy_trainer: SIGUSR1: saving step %lld\n",
                     static_cast<long long>(step));
      save(o, r.model, step);
      r.last_saved = step;
    }
  }
  return finish(r, stopped || g_term);
}
