// Reading a simulation scenario (scenario.h).
#include "simulator/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <set>

#include "scheduler/spec/yaml_reader.h"

namespace orch::sim {

namespace {

using yaml::MapView;
using yaml::NumberRange;

constexpr NumberRange kPositive{0.0, true};
constexpr NumberRange kNonNegative{0.0, false};
constexpr NumberRange kShare{0.0, false, 1.0};
constexpr NumberRange kMfu{0.0, true, 1.0};
constexpr double kYearH = 24.0 * 366;

void read_failures(const MapView& file, FailureLaw& law, std::vector<FailureCause>& causes) {
  MapView f = file.child("failures", "failures",
                         {"law", "node_mtbf_h", "shape", "causes", "job_mtbf_h", "fresh_nodes"},
                         "a map such as {law: exponential, node_mtbf_h: 6335}");
  std::string kind = "exponential";
  f.read_string("law", kind, yaml::kNonEmpty, "exponential or weibull");
  if (kind == "weibull") {
    law.kind = FailureLaw::Kind::weibull;
  } else if (kind != "exponential") {
    f.reader().fail(f.value_position("law"), "unknown failure law \"" + kind + "\"",
                    "exponential or weibull");
  }
  double mtbf_h = law.mtbf_s / 3600;
  f.read_number("node_mtbf_h", mtbf_h, {0.0, true, 100 * kYearH},
                "one node's mean time between failures in hours, such as 6335");
  law.mtbf_s = mtbf_h * 3600;
  f.read_number("shape", law.shape, {0.0, true, 100.0}, "a Weibull shape such as 0.8");
  double job_mtbf_h = 0;
  f.read_number("job_mtbf_h", job_mtbf_h, {0.0, false, 100 * kYearH},
                "the job's own mean time between failures in hours, whatever its size (software, "
                "its network), such as 200; 0: none");
  law.job_mtbf_s = job_mtbf_h * 3600;
  f.read_bool("fresh_nodes", law.fresh_nodes,
              "true (every node new at the start) or false (nodes of every age, the default)");
  std::string mix = "llama3";
  f.read_string("causes", mix, yaml::kNonEmpty, "llama3 (the only mix so far)");
  if (mix != "llama3") {
    f.reader().fail(f.value_position("causes"), "unknown cause mix \"" + mix + "\"",
                    "llama3 (Meta's table of Llama 3's interruptions)");
  }
  causes = llama3_cause_mix();
}

void read_quarantine(MapView& c, QuarantineSpec& q) {
  MapView m =
      c.child("quarantine", "quarantine", {"failures", "window_h", "cooldown_h", "retire_after"},
              "orchestrate's rule, as in a clusters file: {failures: 2, window_h: 168}");
  m.read_int("failures", q.failures, 1, 1'000'000, "failures that quarantine a node, such as 2");
  m.read_number("window_h", q.window_h, {0.0, true, kYearH}, "hours such as 168");
  m.read_number("cooldown_h", q.cooldown_h, {0.0, false, kYearH}, "hours such as 1");
  m.read_int("retire_after", q.retire_after, 1, 1'000'000, "quarantines that retire, such as 3");
}

void read_cluster(MapView& c, const FailureLaw& law, SimCluster& out) {
  out.law = law;
  c.require("name", "a cluster name");
  c.read_string("name", out.name, yaml::kName, "a cluster name such as alpha");
  c.require("nodes", "the number of nodes");
  c.read_int("nodes", out.nodes, 1, 1'000'000, "a number of nodes such as 272");
  c.read_int("gpus_per_node", out.gpus_per_node, 1, 64, "GPUs per node such as 8");
  double peak_tflops = out.peak_flops_per_gpu / 1e12;
  c.read_number("peak_tflops", peak_tflops, {0.0, true, 1e6},
                "a GPU's dense peak in TFLOP/s, such as 989 (H100)");
  out.peak_flops_per_gpu = peak_tflops * 1e12;
  c.require("mfu", "the MFU a healthy gang reaches there");
  c.read_number("mfu", out.mfu, kMfu, "an MFU above 0 and at most 1, such as 0.38");
  std::optional<double> mtbf_h;
  c.read_number("node_mtbf_h", mtbf_h, {0.0, true, 100 * kYearH},
                "this cluster's node MTBF in hours (else the scenario's)");
  if (mtbf_h) out.law.mtbf_s = *mtbf_h * 3600;
  MapView lemons = c.child("lemons", "lemons", {"fraction", "multiplier"},
                           "a map such as {fraction: 0.05, multiplier: 20}");
  lemons.read_number("fraction", out.lemon_fraction, kShare, "a share of nodes such as 0.05");
  lemons.read_number("multiplier", out.lemon_multiplier, {1.0, false, 1e6},
                     "how many times as often a lemon fails, such as 20");
  MapView slow = c.child("slow_nodes", "slow_nodes", {"fraction", "speed"},
                         "a map such as {fraction: 0.01, speed: 0.7}");
  slow.read_number("fraction", out.slow_fraction, kShare, "a share of nodes such as 0.01");
  slow.read_number("speed", out.slow_speed, {0.0, true, 1.0},
                   "a slow node's speed, above 0 and at most 1, such as 0.7");
  c.read_number("restart_s", out.restart_s, {0.0, false, 86400.0},
                "seconds from nodes granted to the first step, such as 600");
  c.read_int("spares", out.spares, 0, 1'000'000, "hot spare nodes held for the job, such as 41");
  c.read_number("spare_restart_s", out.spare_restart_s, {0.0, false, 86400.0},
                "seconds from a hot spare joining to the first step, such as 30");
  double burn_in_h = out.burn_in_s / 3600;
  c.read_number("burn_in_h", burn_in_h, {0.0, false, kYearH},
                "hours before a replacement spare is burned in, such as 0.25");
  out.burn_in_s = burn_in_h * 3600;
  double repair_h = out.repair_s / 3600;
  c.read_number("repair_h", repair_h, {0.0, false, kYearH}, "hours a failed node is down");
  out.repair_s = repair_h * 3600;
  MapView outages =
      c.child("outages", "outages", {"mtbf_h", "hours"}, "a map such as {mtbf_h: 720, hours: 2}");
  double outage_mtbf_h = 0, outage_h = out.outage_s / 3600;
  outages.read_number("mtbf_h", outage_mtbf_h, {0.0, false, 100 * kYearH},
                      "mean hours between outages (0: none)");
  outages.read_number("hours", outage_h, {0.0, true, kYearH}, "how long one lasts, in hours");
  out.outage_mtbf_s = outage_mtbf_h * 3600;
  out.outage_s = outage_h * 3600;
  MapView blips =
      c.child("blips", "blips", {"mtbf_h", "seconds"}, "a map such as {mtbf_h: 24, seconds: 90}");
  double blip_mtbf_h = 0;
  blips.read_number("mtbf_h", blip_mtbf_h, {0.0, false, 100 * kYearH},
                    "mean hours between network blips (0: none)");
  blips.read_number("seconds", out.blip_s, {0.0, true, 86400.0},
                    "how long the site does not answer, in seconds");
  out.blip_mtbf_s = blip_mtbf_h * 3600;
  c.read_number("progress_every_s", out.progress_every_s, {0.0, true, 86400.0},
                "seconds between a job's progress lines, such as 600");
}

// A count that must be whole (steps, tokens): a fraction is refused where it is written, never
// rounded (`checkpoint_every: 0.5` would otherwise run as "never save").
void read_count(MapView& j, std::string_view key, std::int64_t& out, NumberRange range,
                const std::string& expected) {
  double v = static_cast<double>(out);
  j.read_number(key, v, range, expected);
  if (!j.has(key) || j.reader().failed()) return;
  if (v != std::floor(v)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", v);
    j.reader().fail(j.value_position(key), std::string(key) + " is " + got + ", not a whole number",
                    expected);
    return;
  }
  out = static_cast<std::int64_t>(v);
}

void read_job(MapView& file, Scenario& s) {
  file.require("job", "the job to simulate");
  MapView j = file.child(
      "job", "job",
      {"name", "nodes", "gpus_per_node", "parameters", "flops_per_token", "tokens_per_step",
       "total_steps", "checkpoint_every", "save_s", "drain_s", "checkpoint_gb",
       "expected_run_days"},
      "a map such as {name: llm, nodes: 256, parameters: 7e9, tokens_per_step: 4194304}");
  SimJob& job = s.job;
  job.name = "train";
  j.read_string("name", job.name, yaml::kName, "a job name such as llm");
  j.read_int("nodes", s.job_nodes, 1, 1'000'000, "the job's nodes, such as 256");
  j.read_int("gpus_per_node", s.job_gpus_per_node, 1, 64, "GPUs per node such as 8");
  std::optional<double> parameters, flops_per_token;
  j.read_number("parameters", parameters, kPositive, "the model's parameters, such as 7e9");
  j.read_number("flops_per_token", flops_per_token, kPositive,
                "training FLOPs per token (else 6 x parameters)");
  if (!parameters && !flops_per_token && !j.reader().failed()) {
    j.reader().fail(j.position(), "the job needs \"parameters\" or \"flops_per_token\"",
                    "parameters: 7e9 (6 FLOPs per parameter and token)");
  }
  job.tokens_per_step = 4'194'304;
  read_count(j, "tokens_per_step", job.tokens_per_step, {0.0, true, 1e12},
             "a whole number of tokens per step, such as 4194304");
  job.flops_per_step = (flops_per_token ? *flops_per_token : 6 * parameters.value_or(0)) *
                       static_cast<double>(job.tokens_per_step);
  job.total_steps = 1'000'000'000'000;  // far more than any window: the job trains all along
  read_count(j, "total_steps", job.total_steps, {0.0, true, 1e15},
             "the job's length, a whole number of steps");
  job.checkpoint_every = 0;
  read_count(j, "checkpoint_every", job.checkpoint_every, kNonNegative,
             "a whole number of steps between saves, such as 3000 (0: never)");
  j.read_number("save_s", job.save_s, {0.0, false, 86400.0}, "seconds a save blocks, such as 60");
  j.read_number("drain_s", job.drain_s, {0.0, false, 86400.0},
                "seconds a tiered save's background drain to shared storage takes (0: no tiers)");
  double gb = 100;
  j.read_number("checkpoint_gb", gb, {0.0, false, 1e6}, "a checkpoint's size in GB");
  job.checkpoint_bytes = static_cast<std::int64_t>(gb * 1e9);
  std::optional<double> run_days;
  j.read_number("expected_run_days", run_days, {0.0, false, 365.0},
                "days the job's spec says its run takes (placement.expected_run), such as 30");
  if (run_days) s.job_expected_run_s = *run_days * 86400.0;
}

void read_policies(MapView& file, Scenario& s) {
  if (!file.has("policies")) return;
  std::vector<std::string> policies;
  file.read_string_list("policies", policies, yaml::kNonEmpty,
                        "a list of orchestrate, restart-in-place, failover-only");
  for (const auto& p : policies) {
    if (p != kPolicyOrchestrate && p != kPolicyRestartInPlace && p != kPolicyFailoverOnly) {
      file.reader().fail(file.value_position("policies"), "unknown policy \"" + p + "\"",
                         "orchestrate, restart-in-place or failover-only");
      return;
    }
  }
  if (policies.empty()) {
    file.reader().fail(file.value_position("policies"), "no policy to run",
                       "at least one of orchestrate, restart-in-place, failover-only");
  }
  s.policies = policies;
}

}  // namespace

const std::vector<std::string_view>& scenario_cluster_keys() {
  static const std::vector<std::string_view> keys = {
      "name",      "nodes",       "gpus_per_node",   "peak_tflops",
      "mfu",       "node_mtbf_h", "lemons",          "slow_nodes",
      "restart_s", "spares",      "spare_restart_s", "burn_in_h",
      "repair_h",  "outages",     "blips",           "progress_every_s",
      "quarantine"};
  return keys;
}

void read_scenario_failures(const yaml::MapView& file, FailureLaw& law,
                            std::vector<FailureCause>& causes) {
  read_failures(file, law, causes);
}

void read_scenario_cluster(yaml::MapView& c, const FailureLaw& law, SimCluster& out,
                           QuarantineSpec& quarantine) {
  read_cluster(c, law, out);
  read_quarantine(c, quarantine);
}

void read_run_keys(yaml::MapView& file, std::string& name, std::uint64_t& seed, int& seeds,
                   double& days, double& poll_s, double& tick_s, double& transfer_bytes_per_s) {
  file.read_string("name", name, yaml::kName, "a name such as lottery");
  int first_seed = static_cast<int>(seed);
  file.read_int("seed", first_seed, 0, 1'000'000'000, "a seed such as 1");
  seed = static_cast<std::uint64_t>(first_seed);
  file.read_int("seeds", seeds, 1, 1000, "how many seeds to run, such as 20");
  file.read_number("days", days, {0.0, true, 3660.0}, "simulated days such as 30");
  file.read_number("poll_s", poll_s, {0.0, true, 3600.0}, "seconds such as 30");
  file.read_number("tick_s", tick_s, {0.0, true, 3600.0}, "seconds such as 30");
  double gbps = transfer_bytes_per_s * 8 / 1e9;
  file.read_number("transfer_gbps", gbps, {0.0, true, 1e6}, "Gb/s between sites, such as 10");
  transfer_bytes_per_s = gbps * 1e9 / 8;
}

Result<Scenario> parse_scenario(std::string_view text, std::string_view source) {
  try {
    auto root = yaml::load_document(text, source, "a simulation scenario");
    if (!root) return root.error();
    yaml::Reader reader(source);
    MapView file(reader, *root, "the scenario",
                 {"name", "seed", "seeds", "days", "poll_s", "tick_s", "transfer_gbps", "policies",
                  "failures", "clusters", "job"},
                 "a map with \"clusters\" and \"job\"");
    if (reader.failed()) return reader.error();
    Scenario s;
    s.source = std::string(source);
    s.name = "scenario";
    read_run_keys(file, s);
    read_policies(file, s);
    FailureLaw law{FailureLaw::Kind::exponential, 6335.0 * 3600, 1};
    read_scenario_failures(file, law, s.causes);
    file.require("clusters", "a list of simulated clusters");
    if (const auto* field = file.find("clusters")) {
      const YAML::Node& list = field->value;
      if (!list.IsSequence() || list.size() == 0) {
        reader.fail(file.value_position("clusters"), "\"clusters\" is not a non-empty list",
                    "a list of clusters, each {name, nodes, mfu, ...}");
      } else {
        std::set<std::string> names;
        for (std::size_t i = 0; i < list.size(); ++i) {
          MapView c(reader, list[i], "cluster " + std::to_string(i + 1), scenario_cluster_keys(),
                    "a map such as {name: alpha, nodes: 272, mfu: 0.38}");
          SimCluster cluster;
          QuarantineSpec quarantine;
          read_scenario_cluster(c, law, cluster, quarantine);
          s.quarantine.push_back(quarantine);
          if (!reader.failed() && !names.insert(cluster.name).second) {
            reader.fail(c.value_position("name"),
                        "cluster \"" + cluster.name + "\" is listed twice", "a name of its own");
          }
          s.clusters.push_back(std::move(cluster));
        }
      }
    }
    if (reader.failed()) return reader.error();
    read_job(file, s);
    if (reader.failed()) return reader.error();
    s.job.mtbf_s = law.job_mtbf_s;
    const bool fits = std::any_of(s.clusters.begin(), s.clusters.end(), [&](const SimCluster& c) {
      return c.nodes >= s.job_nodes && c.gpus_per_node >= s.job_gpus_per_node;
    });
    if (!fits) {
      reader.fail(file.key_position("job"),
                  "job " + s.job.name + " needs " + std::to_string(s.job_nodes) + " nodes of " +
                      std::to_string(s.job_gpus_per_node) + " GPUs, more than any cluster has",
                  "a job that fits on at least one cluster");
      return reader.error();
    }
    for (auto& c : s.clusters) {
      c.gpus_per_node = std::max(c.gpus_per_node, 1);
      if (auto r = c.check(); !r) {
        return make_error(ErrorKind::invalid, s.source + ": " + r.error().message);
      }
    }
    return s;
  } catch (const std::exception& e) {
    return make_error(ErrorKind::invalid, std::string(source) +
                                              ":1:1: could not read the scenario (" + e.what() +
                                              "); expected a simulation scenario");
  }
}

}  // namespace orch::sim
