// Issue 3's figures on the project's real Slurm lab (tests/lab/slurm): real slurmctld/slurmd,
// real sshd login nodes, the real `orchestrate serve`. Each measurement prints a table with a
// baseline measured in the same run:
//
//   1. failover (slurm_failover.cpp): a node of alpha crashes under a running toy trainer; when
//      Slurm marks it DOWN (the baseline), when orchestrate ends the attempt, when the
//      replacement runs on beta. A fresh lab and server per run.
//   2. launches/s and 3. polls/s (slurm_throughput.cpp): over one SSH connection, against one
//      new OpenSSH `ssh` process per launch or poll.
//
//   build/bin/bench_slurm [--runs N] [--launches N] [--polls N] [--poll-interval-ms MS]
//                         [--backoff-s S] [--slurmd-timeout S] [--gang-nodes N]
//                         [--heartbeat-timeout-s S] [--defaults 0|1] [--slurm-down 0|1]
//                         [--spares N]
//
// N = 0 skips a measurement. --poll-interval-ms is the site worker's poll in the failover runs,
// --backoff-s the job's restart.backoff.initial_s (0.1, as in the Slurm end-to-end tests; the
// default of a job spec is 10), --slurmd-timeout the labs' SlurmdTimeout (LAB_SLURMD_TIMEOUT),
// --gang-nodes N a failover of an N-node gang on alpha that is replaced on alpha without the dead
// node (issue 14), with --heartbeat-timeout-s the gang's heartbeat_timeout_s; --defaults 1 sets
// none of those (the product out of the box, issue 38); --spares N has alpha hold N hot spares
// (issue 38: the gang's lab has no other node to spare, so its replacement must take one, and
// the table adds the replacement's first step). Runs
// as root (the lab does). Every lab and server it starts is torn down on the way out, on errors and
// on SIGINT/SIGTERM too (loops stop at the next check).
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "bench/bench_util.h"
#include "bench/slurm_failover.h"
#include "bench/slurm_lab_util.h"
#include "bench/slurm_throughput.h"

using namespace orch::bench;  // NOLINT: a benchmark's main file

namespace {

struct Options {
  FailoverOptions failover;  // --runs, --poll-interval-ms, --backoff-s, --slurmd-timeout
  int launches = 40;
  int polls = 100;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  auto to_int = [](int& out) { return [&out](double v) { out = static_cast<int>(v); }; };
  if (auto rc = parse_flags(
          argc, argv, "bench_slurm",
          "Failover latency, launches/s and polls/s on the real Slurm lab (tests/lab/slurm).",
          {{"--runs", "N", "crash-and-resume runs (default 5; 0 skips)", 0, 100000, true,
            to_int(o.failover.runs)},
           {"--launches", "N", "launches to time (default 40; 0 skips)", 0, 100000, true,
            to_int(o.launches)},
           {"--polls", "N", "polls to time (default 100; 0 skips)", 0, 100000, true,
            to_int(o.polls)},
           {"--poll-interval-ms", "MS", "the site worker's poll interval (default 200)", 10, 100000,
            true, to_int(o.failover.poll_ms)},
           {"--backoff-s", "S", "the job's first restart backoff (default 0.1)", 0.1, 100000, false,
            [&](double v) { o.failover.backoff_s = v; }},
           {"--slurmd-timeout", "S", "SlurmdTimeout of the labs (default: the lab's)", 1, 100000,
            true, to_int(o.failover.slurmd_timeout)},
           {"--gang-nodes", "N",
            "failover of a gang of N nodes on alpha, replaced there (default 1: one node, "
            "replaced on beta)",
            1, 7, true, to_int(o.failover.gang_nodes)},
           {"--heartbeat-timeout-s", "S", "the gang's heartbeat_timeout_s (default 10)", 1, 3600,
            false, [&](double v) { o.failover.heartbeat_timeout_s = v; }},
           {"--defaults", "0|1",
            "1: the job and clusters set nothing (poll, heartbeat, restart: the product's "
            "defaults; the three flags above are ignored)",
            0, 1, true, [&](double v) { o.failover.defaults = v != 0; }},
           {"--slurm-down", "0|1",
            "0: stop watching Slurm once the replacement runs (not waiting SlurmdTimeout for "
            "its DOWN; default 1)",
            0, 1, true, [&](double v) { o.failover.wait_for_slurm_down = v != 0; }},
           {"--spares", "N", "hot spares alpha holds in the gang failover (default 0)", 0, 4, true,
            to_int(o.failover.spares)}})) {
    return *rc;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::printf("bench_slurm on the real Slurm lab (tests/lab/slurm); %ld CPUs, load %.2f at start\n",
              sysconf(_SC_NPROCESSORS_ONLN), load_average());
  std::fflush(stdout);
  int rc = 0;
  try {
    if (o.launches > 0 || o.polls > 0) bench_throughput(o.launches, o.polls);
    if (o.failover.runs > 0) bench_failover(o.failover);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_slurm: %s\n", e.what());
    rc = 1;
  }
  std::printf("\nload %.2f at the end%s\n", load_average(), stopping() ? " (interrupted)" : "");
  return stopping() ? 130 : rc;
}
