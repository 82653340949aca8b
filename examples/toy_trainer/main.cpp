// toy_trainer: a tiny but real training loop for demos and tests of orchestrate. It speaks the
// progress protocol (docs/progress-protocol.md), saves atomic checksummed checkpoints, resumes
// from the checkpoint named by $ORCH_RESUME_FROM, and can fail on purpose (crash, SIGKILL,
// hang) at a chosen step. Flags and exit codes: examples/README.md.

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
#include <optional>
#include <string>
#include <string_view>

#include "examples/toy_trainer/checkpoint.h"
#include "examples/toy_trainer/model.h"
#include "scheduler/model/progress_line.h"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitCrash = 3;
constexpr int kExitData = 65;
constexpr int kExitIo = 74;
constexpr int kExitTerm = 143;

constexpr const char* kUsage =
    "usage: toy_trainer [options]\n"
    "  --steps N            total steps; the run ends after step N (default 100)\n"
    "  --dim D              weight matrix is D x D; FLOPs/token = 6*D*D (default 128)\n"
    "  --batch B            tokens (rows) per step (default 64)\n"
    "  --lr X               SGD learning rate (default 0.05)\n"
    "  --ckpt-dir DIR       where step-<S>.ckpt files go (needed to checkpoint)\n"
    "  --ckpt-every N       checkpoint every N steps, 0 = never (default 10 with --ckpt-dir)\n"
    "  --keep-ckpts N       keep the newest N checkpoints, 0 = all (default 3)\n"
    "  --resume-env NAME    env var holding a checkpoint to resume (default ORCH_RESUME_FROM)\n"
    "  --step-delay-ms N    sleep N ms in each step, counted in step_time_s (default 0)\n"
    "  --crash-at-step S    exit 3 after printing step S (a bug in user code)\n"
    "  --signal-at-step S   SIGKILL itself after printing step S (an OOM kill)\n"
    "  --hang-at-step S     stop after printing step S and sleep forever (ignores SIGTERM)\n"
    "  --fault-attempt A    fire the three hooks above only when $ORCH_ATTEMPT == A\n"
    "  --help               this text\n"
    "exit codes: 0 done, 2 bad flags, 3 crash hook, 65 bad checkpoint, 74 I/O error,\n"
    "            143 SIGTERM (after saving a checkpoint)\n";

struct Options {
  std::int64_t steps = 100;
  std::int64_t keep_ckpts = 3;
  int dim = 128;
  int batch = 64;
  double lr = 0.05;
  std::string ckpt_dir;
  std::optional<std::int64_t> ckpt_every;
  std::string resume_env = "ORCH_RESUME_FROM";
  std::int64_t step_delay_ms = 0;
  std::optional<std::int64_t> crash_at, signal_at, hang_at;
  std::optional<std::string> fault_attempt;
};

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "toy_trainer: %s\n%s", why.c_str(), kUsage);
  std::exit(kExitUsage);
}

std::int64_t parse_int(const std::string& flag, const std::string& v, std::int64_t min,
                       std::int64_t max) {
  errno = 0;
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < min || n > max) {
    usage_error(flag + " needs an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                "], got \"" + v + "\"");
  }
  return n;
}

Options parse_flags(int argc, char** argv) {
  Options o;
  constexpr std::int64_t kBig = 1'000'000'000'000LL;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    std::string value;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag.rfind("--", 0) == 0 && i + 1 < argc) {
      value = argv[++i];
    } else {
      usage_error(flag.rfind("--", 0) == 0 ? flag + " needs a value"
                                           : "unexpected \"" + flag + "\"");
    }
    if (flag == "--steps") {
      o.steps = parse_int(flag, value, 0, kBig);
    } else if (flag == "--dim") {
      o.dim = static_cast<int>(parse_int(flag, value, 1, 4096));
    } else if (flag == "--batch") {
      o.batch = static_cast<int>(parse_int(flag, value, 1, 1 << 20));
    } else if (flag == "--lr") {
      char* end = nullptr;
      o.lr = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(o.lr > 0) || o.lr > 10) {
        usage_error("--lr needs a number in (0, 10], got \"" + value + "\"");
      }
    } else if (flag == "--ckpt-dir") {
      if (value.empty()) usage_error("--ckpt-dir needs a directory");
      o.ckpt_dir = value;
    } else if (flag == "--ckpt-every") {
      o.ckpt_every = parse_int(flag, value, 0, kBig);
    } else if (flag == "--keep-ckpts") {
      o.keep_ckpts = parse_int(flag, value, 0, kBig);
    } else if (flag == "--resume-env") {
      if (value.empty()) usage_error("--resume-env needs a variable name");
      o.resume_env = value;
    } else if (flag == "--step-delay-ms") {
      o.step_delay_ms = parse_int(flag, value, 0, 3'600'000);
    } else if (flag == "--crash-at-step") {
      o.crash_at = parse_int(flag, value, 1, kBig);
    } else if (flag == "--signal-at-step") {
      o.signal_at = parse_int(flag, value, 1, kBig);
    } else if (flag == "--hang-at-step") {
      o.hang_at = parse_int(flag, value, 1, kBig);
    } else if (flag == "--fault-attempt") {
      o.fault_attempt = value;
    } else {
      usage_error("unknown flag " + flag);
    }
  }
  if (o.ckpt_every.value_or(0) > 0 && o.ckpt_dir.empty()) {
    usage_error("--ckpt-every > 0 needs --ckpt-dir");
  }
  if (!o.ckpt_dir.empty() && !o.ckpt_every) o.ckpt_every = 10;
  return o;
}

volatile sig_atomic_t g_term = 0;
extern "C" void on_term(int) {
  g_term = 1;
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

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_flags(argc, argv);

  struct sigaction sa {};
  sa.sa_handler = on_term;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: let nanosleep return early
  sigaction(SIGTERM, &sa, nullptr);

  toy::Model model(o.dim, o.batch, static_cast<float>(o.lr));
  std::int64_t done = 0;         // last completed step
  std::int64_t last_saved = -1;  // step of the last checkpoint this run wrote
  if (const char* from = std::getenv(o.resume_env.c_str()); from && *from) {
    toy::Loaded loaded;
    std::string error;
    if (!toy::load_checkpoint(from, o.dim, loaded, error)) {
      std::fprintf(stderr, "toy_trainer: cannot resume from $%s: %s\n", o.resume_env.c_str(),
                   error.c_str());
      return kExitData;
    }
    model.weights() = std::move(loaded.weights);
    done = loaded.step;
    std::fprintf(stderr, "toy_trainer: resumed from %s at step %lld\n", from,
                 static_cast<long long>(done));
  }

  bool faults = true;
  if (o.fault_attempt) {
    const char* attempt = std::getenv("ORCH_ATTEMPT");
    faults = attempt && *o.fault_attempt == attempt;
  }
  const bool checkpointing = !o.ckpt_dir.empty() && o.ckpt_every.value_or(0) > 0;

  for (std::int64_t step = done + 1; step <= o.steps && !g_term; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    const double loss = model.train_step(step);
    if (o.step_delay_ms > 0) sleep_ms(o.step_delay_ms);
    orch::ProgressReport p;
    p.step = step;
    p.tokens = o.batch;
    p.step_time_s = std::max(seconds_since(t0), 1e-9);
    p.loss = loss;
    emit(p);
    done = step;

    if (faults && o.crash_at == step) {
      std::fprintf(stderr, "toy_trainer: simulated crash at step %lld (--crash-at-step)\n",
                   static_cast<long long>(step));
      return kExitCrash;
    }
    if (faults && o.signal_at == step) {
      std::fprintf(stderr, "toy_trainer: SIGKILL at step %lld (--signal-at-step)\n",
                   static_cast<long long>(step));
      std::raise(SIGKILL);
    }
    if (faults && o.hang_at == step) {
      std::fprintf(stderr, "toy_trainer: hanging at step %lld (--hang-at-step)\n",
                   static_cast<long long>(step));
      signal(SIGTERM, SIG_IGN);  // a deadlocked job does not answer; only SIGKILL ends it
      for (;;) ::pause();
    }
    if (checkpointing && step % *o.ckpt_every == 0) {
      save(o, model, step);
      last_saved = step;
    }
  }

  if (g_term) {
    std::fprintf(stderr, "toy_trainer: SIGTERM after step %lld\n", static_cast<long long>(done));
    // Already saved (and its line printed) when SIGTERM came during that save: nothing to add.
    if (!o.ckpt_dir.empty() && done > 0 && done != last_saved) save(o, model, done);
    return kExitTerm;
  }
  return 0;
}
