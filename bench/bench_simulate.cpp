// Issue 19's scale figures: `orchestrate simulate` as the load test of the control plane. One
// job of 1,024, 4,096 and 16,384 GPUs over 3 clusters (each 1/32 larger than the job), nodes
// failing at Llama 3's rate, for --days simulated days: simulated days per second of wall time
// and the brain's events per second, with the restart-in-place baseline (the same world without
// the brain) as the floor, in the same run.
#include <cstdio>
#include <iostream>
#include <string>

#include "bench/bench_util.h"
#include "simulator/simulate.h"

namespace {

orch::sim::Scenario scenario(int gpus, double days) {
  using namespace orch::sim;
  Scenario s;
  s.name = "scale-" + std::to_string(gpus);
  s.days = days;
  const int nodes = gpus / 8;
  for (const char* name : {"alpha", "beta", "gamma"}) {
    SimCluster c;
    c.name = name;
    c.nodes = nodes + nodes / 32;
    c.mfu = 0.4;
    c.law = {FailureLaw::Kind::exponential, 6335.0 * 3600, 1};
    c.restart_s = 600;
    c.repair_s = 4 * 3600;
    s.clusters.push_back(c);
    s.quarantine.push_back({});
  }
  s.causes = llama3_cause_mix();
  s.job.name = "scale";
  s.job.tokens_per_step = 16'777'216;
  s.job.flops_per_step = 6 * 70e9 * static_cast<double>(s.job.tokens_per_step);
  s.job.total_steps = 1'000'000'000;
  s.job.checkpoint_every = 500;
  s.job.save_s = 60;
  s.job.checkpoint_bytes = 840'000'000'000;
  s.job_nodes = nodes;
  s.job_gpus_per_node = 8;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  double days = 30;
  int only_gpus = 0;
  if (auto rc = orch::bench::parse_flags(
          argc, argv, "bench_simulate",
          "Simulated days per second of a 1k, 4k and 16k-GPU job through the brain.",
          {{"--days", "D", "simulated days per run (default 30)", 1, 365, false,
            [&](double v) { days = v; }},
           {"--gpus", "N", "run only this size (1024, 4096 or 16384; default all three)", 0, 16384,
            true, [&](double v) { only_gpus = static_cast<int>(v); }}})) {
    return *rc;
  }
  std::printf("load average at start: %.2f\n\n", orch::bench::load_average());
  std::printf("%-8s %-18s %8s %10s %12s %12s %14s %10s %14s %12s\n", "GPUs", "policy", "days",
              "wall s", "sim days/s", "events", "events/s", "interrupts", "useful GPU-h",
              "kept steps");
  for (int gpus : {1024, 4096, 16384}) {
    if (only_gpus != 0 && gpus != only_gpus) continue;
    const auto s = scenario(gpus, days);
    for (const char* policy : {"restart-in-place", "orchestrate"}) {
      auto run = orch::sim::run_policy(s, policy, 1);
      if (!run) {
        std::cerr << "bench_simulate: " << run.error().message << "\n";
        return 1;
      }
      const auto m = orch::sim::measure(s, *run);
      // The report's figures beside the timing: a faster brain must decide the same.
      std::printf("%-8d %-18s %8.0f %10.2f %12.2f %12lld %14.0f %10d %14.1f %12lld\n", gpus, policy,
                  days, run->wall_s, days / run->wall_s, static_cast<long long>(run->events),
                  static_cast<double>(run->events) / run->wall_s, m.interruptions,
                  m.useful_gpu_hours, static_cast<long long>(m.kept_steps));
    }
  }
  return 0;
}
