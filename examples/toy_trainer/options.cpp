#include "examples/toy_trainer/options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace toy {
namespace {

constexpr const char* kUsage =
    "usage: toy_trainer [options]\n"
    "  --steps N            total steps; the run ends after step N (default 100)\n"
    "  --dim D              weight matrix is D x D; FLOPs/token = 6*D*D (default 128)\n"
    "  --batch B            tokens (rows) per step and rank (default 64)\n"
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
    "  --fault-rank R       fire the three hooks above only on rank R (default every rank)\n"
    "multi-rank (ORCH_TASK_RANK/ORCH_NTASKS, else RANK/WORLD_SIZE; one rank when unset):\n"
    "  --rendezvous-timeout-s T  how long ranks wait for each other at start (default 120)\n"
    "  --collective-timeout-s T  how long an all-reduce may wait for a peer (default 600)\n"
    "  --slow-rank R        rank R sleeps --slow-ms extra in each step (a straggler)\n"
    "  --slow-ms MS         the straggler's extra sleep per step (default 200)\n"
    "  --deadlock-at-step S at step S every rank > 0 stops taking part and sleeps forever\n"
    "  --report-ranks N     every N steps rank 0 adds the ranks' times to progress (0 = never)\n"
    "  --help               this text\n"
    "exit codes: 0 done, 1 a peer or the network failed, 2 bad flags or launch variables,\n"
    "            3 crash hook, 65 bad checkpoint, 74 I/O error, 143 SIGTERM (after saving a\n"
    "            checkpoint)\n";

constexpr std::int64_t kBig = 1'000'000'000'000LL;

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

// Seconds > 0 and at most a day; fractions allowed (tests use short timeouts).
double parse_seconds(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(s) || !(s > 0) || s > 86400) {
    usage_error(flag + " needs a number of seconds in (0, 86400], got \"" + v + "\"");
  }
  return s;
}

// The flags of a single-rank run (what toy_trainer always had). False: not one of them.
bool apply_training_flag(Options& o, const std::string& flag, const std::string& value) {
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
  } else {
    return false;
  }
  return true;
}

// The fault hooks and the multi-rank flags. False: not one of them.
bool apply_fault_or_gang_flag(Options& o, const std::string& flag, const std::string& value) {
  if (flag == "--crash-at-step") {
    o.crash_at = parse_int(flag, value, 1, kBig);
  } else if (flag == "--signal-at-step") {
    o.signal_at = parse_int(flag, value, 1, kBig);
  } else if (flag == "--hang-at-step") {
    o.hang_at = parse_int(flag, value, 1, kBig);
  } else if (flag == "--fault-attempt") {
    o.fault_attempt = value;
  } else if (flag == "--fault-rank") {
    o.fault_rank = parse_int(flag, value, 0, 1 << 20);
  } else if (flag == "--rendezvous-timeout-s") {
    o.rendezvous_timeout_s = parse_seconds(flag, value);
  } else if (flag == "--collective-timeout-s") {
    o.collective_timeout_s = parse_seconds(flag, value);
  } else if (flag == "--slow-rank") {
    o.slow_rank = parse_int(flag, value, 0, 1 << 20);
  } else if (flag == "--slow-ms") {
    o.slow_ms = parse_int(flag, value, 0, 3'600'000);
  } else if (flag == "--deadlock-at-step") {
    o.deadlock_at = parse_int(flag, value, 1, kBig);
  } else if (flag == "--report-ranks") {
    o.report_ranks = parse_int(flag, value, 0, kBig);
  } else {
    return false;
  }
  return true;
}

}  // namespace

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "toy_trainer: %s\n%s", why.c_str(), kUsage);
  std::exit(kExitUsage);
}

Options parse_flags(int argc, char** argv) {
  Options o;
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
    if (!apply_training_flag(o, flag, value) && !apply_fault_or_gang_flag(o, flag, value)) {
      usage_error("unknown flag " + flag);
    }
  }
  if (o.ckpt_every.value_or(0) > 0 && o.ckpt_dir.empty()) {
    usage_error("--ckpt-every > 0 needs --ckpt-dir");
  }
  if (!o.ckpt_dir.empty() && !o.ckpt_every) o.ckpt_every = 10;
  return o;
}

}  // namespace toy
