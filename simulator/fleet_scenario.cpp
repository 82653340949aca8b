// Reading a fleet scenario (fleet_scenario.h).
#include "simulator/fleet_scenario.h"

#include <algorithm>
#include <exception>
#include <set>

#include "scheduler/spec/price_section.h"
#include "scheduler/spec/scheduling_section.h"
#include "scheduler/spec/yaml_reader.h"
#include "simulator/scenario.h"

namespace orch::sim {

namespace {

using yaml::MapView;

constexpr std::string_view kRangeShape = "a number or a list [low, high] such as [1, 4]";

// `key: 4` or `key: [1, 4]` into [lo, hi] (lo <= hi, both within [min, max]).
void read_range(MapView& m, std::string_view key, double& lo, double& hi, double min, double max,
                std::string_view expected) {
  const yaml::Field* f = m.find(key);
  if (f == nullptr || m.reader().failed()) return;
  std::vector<double> values;
  bool ok = true;
  if (f->value.IsSequence() && (f->value.size() == 1 || f->value.size() == 2)) {
    for (const auto& v : f->value) {
      auto x = yaml::scalar_to_number(v);
      if (!x) ok = false;
      values.push_back(x.value_or(0));
    }
  } else if (auto x = yaml::scalar_to_number(f->value)) {
    values = {*x, *x};
  } else {
    ok = false;
  }
  if (values.size() == 1) values.push_back(values[0]);
  if (!ok || values[0] < min || values[1] > max || values[0] > values[1]) {
    m.reader().fail(m.value_position(key),
                    "\"" + std::string(key) + "\" must be " + std::string(expected) + " from " +
                        yaml::format_number(min) + " to " + yaml::format_number(max) +
                        ", low first; got " + yaml::describe(f->value),
                    kRangeShape);
    return;
  }
  lo = values[0];
  hi = values[1];
}

void read_class(MapView& c, const FleetScenario& s, FleetJobClass& out) {
  c.require("name", "a name for the class, such as pretrain");
  c.read_string("name", out.name, yaml::kName, "a name such as pretrain");
  c.read_number("share", out.share, {0.0, true, 1e9}, "a relative weight such as 0.2");
  c.read_string("team", out.team, yaml::kName, "a team of `teams:`");
  if (c.has("priority")) {
    if (const yaml::Field* f = c.find("priority"); f->value.IsScalar())
      out.priority = f->value.Scalar();
    std::string why;
    if (!c.reader().failed() && !resolve_priority(s.scheduling, out.priority, why)) {
      c.reader().fail(c.value_position("priority"), why,
                      "a class of priority_classes or an integer");
    }
  }
  if (!out.team.empty() && s.scheduling.quotas() && !s.scheduling.teams.count(out.team) &&
      !c.reader().failed()) {
    c.reader().fail(c.value_position("team"), "team \"" + out.team + "\" is not in `teams:`",
                    "one of the teams the scenario gives quotas");
  }
  double nodes_lo = 1, nodes_hi = 1;
  read_range(c, "nodes", nodes_lo, nodes_hi, 1, 100000, "a number of nodes");
  out.nodes_min = static_cast<int>(nodes_lo);
  out.nodes_max = static_cast<int>(nodes_hi);
  if ((nodes_lo != out.nodes_min || nodes_hi != out.nodes_max) && !c.reader().failed()) {
    c.reader().fail(c.value_position("nodes"), "\"nodes\" must be whole numbers",
                    "a number of nodes such as 2 or [1, 4]");
  }
  c.read_int("gpus_per_node", out.gpus_per_node, 1, 64, "GPUs per node such as 8");
  read_range(c, "hours", out.hours_min, out.hours_max, 0.01, 24.0 * 366,
             "hours of training on the fastest cluster");
  c.read_number("step_s", out.step_s, {0.0, true, 86400.0},
                "seconds a step takes on the fastest cluster, such as 10");
  c.read_number("checkpoint_min", out.checkpoint_min, {0.0, false, 100000.0},
                "minutes of training between saves (0: never), such as 30");
  c.read_number("save_s", out.save_s, {0.0, false, 86400.0}, "seconds a save blocks, such as 30");
  c.read_number("checkpoint_gb", out.checkpoint_gb, {0.0, false, 1e6}, "a checkpoint's size in GB");
  if (c.reader().failed()) return;
  const bool fits = std::any_of(s.clusters.begin(), s.clusters.end(), [&](const SimCluster& k) {
    return k.nodes >= out.nodes_max && k.gpus_per_node >= out.gpus_per_node;
  });
  if (!fits) {
    c.reader().fail(c.position(),
                    "job class " + out.name + " needs up to " + std::to_string(out.nodes_max) +
                        " nodes of " + std::to_string(out.gpus_per_node) +
                        " GPUs, more than any cluster has",
                    "jobs that fit on at least one cluster");
  }
}

void read_workload(MapView& file, FleetScenario& s) {
  file.require("workload", "the jobs that arrive");
  MapView w = file.child("workload", "workload",
                         {"jobs", "arrivals_per_hour", "first_arrival_h", "classes"},
                         "a map such as {jobs: 500, arrivals_per_hour: 8, classes: [...]}");
  w.read_int("jobs", s.jobs, 1, 100000, "how many jobs arrive, such as 500");
  w.read_number("arrivals_per_hour", s.arrivals_per_hour, {0.0, true, 1e6},
                "jobs arriving per hour on average (Poisson), such as 8");
  w.read_number("first_arrival_h", s.first_arrival_h, {0.0, false, 24.0 * 3660},
                "hours before the first arrival, such as 0");
  w.require("classes", "the kinds of job that arrive");
  const yaml::Field* f = w.find("classes");
  if (f == nullptr || w.reader().failed()) return;
  if (!f->value.IsSequence() || f->value.size() == 0) {
    w.reader().fail(w.value_position("classes"), "\"classes\" is not a non-empty list",
                    "a list of job classes, each {name, share, team, priority, nodes, hours}");
    return;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < f->value.size() && !w.reader().failed(); ++i) {
    MapView c(w.reader(), f->value[i], "job class " + std::to_string(i + 1),
              {"name", "share", "team", "priority", "nodes", "gpus_per_node", "hours", "step_s",
               "checkpoint_min", "save_s", "checkpoint_gb"},
              "a map such as {name: pretrain, share: 1, team: llm, nodes: [4, 8], hours: [6, 24]}");
    FleetJobClass jc;
    read_class(c, s, jc);
    if (!w.reader().failed() && !names.insert(jc.name).second) {
      w.reader().fail(c.value_position("name"), "job class \"" + jc.name + "\" is listed twice",
                      "a name of its own");
    }
    s.classes.push_back(std::move(jc));
  }
}

void read_clusters(MapView& file, const FailureLaw& law, FleetScenario& s) {
  file.require("clusters", "a list of simulated clusters");
  const yaml::Field* field = file.find("clusters");
  if (field == nullptr || file.reader().failed()) return;
  if (!field->value.IsSequence() || field->value.size() == 0) {
    file.reader().fail(file.value_position("clusters"), "\"clusters\" is not a non-empty list",
                       "a list of clusters, each {name, nodes, mfu, price, ...}");
    return;
  }
  std::vector<std::string_view> keys = scenario_cluster_keys();
  keys.push_back("price");
  std::set<std::string> names;
  for (std::size_t i = 0; i < field->value.size() && !file.reader().failed(); ++i) {
    MapView c(file.reader(), field->value[i], "cluster " + std::to_string(i + 1), keys,
              "a map such as {name: alpha, nodes: 32, mfu: 0.38, price: {per_gpu_hour: 2.5}}");
    SimCluster cluster;
    ClusterSpec spec;
    read_scenario_cluster(c, law, cluster, spec.quarantine);
    spec.name = cluster.name;
    spec.nodes = cluster.nodes;
    spec.gpus_per_node = cluster.gpus_per_node;
    if (!file.reader().failed()) read_price(c, spec, s.cluster_specs);
    if (!file.reader().failed() && !names.insert(cluster.name).second) {
      file.reader().fail(c.value_position("name"),
                         "cluster \"" + cluster.name + "\" is listed twice", "a name of its own");
    }
    s.clusters.push_back(std::move(cluster));
    s.cluster_specs.push_back(std::move(spec));
  }
}

}  // namespace

std::string FleetScenario::currency() const {
  for (const auto& c : cluster_specs) {
    if (c.price.configured) return c.price.currency;
  }
  return "";
}

bool is_fleet_scenario(std::string_view text) {
  auto root = yaml::load_document(text, "scenario", "a simulation scenario");
  return root && root->IsMap() && root->operator[]("workload").IsDefined();
}

Result<FleetScenario> parse_fleet_scenario(std::string_view text, std::string_view source) {
  try {
    auto root = yaml::load_document(text, source, "a fleet scenario");
    if (!root) return root.error();
    yaml::Reader reader(source);
    MapView file(reader, *root, "the scenario",
                 {"name", "seed", "seeds", "days", "poll_s", "tick_s", "transfer_gbps", "failures",
                  "clusters", "priority_classes", "teams", "placement", "workload"},
                 "a map with \"clusters\" and \"workload\"");
    if (reader.failed()) return reader.error();
    FleetScenario s;
    s.source = std::string(source);
    s.name = "fleet";
    read_run_keys(file, s);
    FailureLaw law{FailureLaw::Kind::exponential, 6335.0 * 3600, 1};
    read_scenario_failures(file, law, s.causes);
    read_clusters(file, law, s);
    if (reader.failed()) return reader.error();
    read_scheduling(file, s.cluster_specs, s.scheduling);
    if (reader.failed()) return reader.error();
    read_workload(file, s);
    if (reader.failed()) return reader.error();
    for (auto& c : s.clusters) {
      if (auto r = c.check(); !r) {
        return make_error(ErrorKind::invalid, s.source + ": " + r.error().message);
      }
    }
    return s;
  } catch (const std::exception& e) {
    return make_error(ErrorKind::invalid, std::string(source) +
                                              ":1:1: could not read the scenario (" + e.what() +
                                              "); expected a fleet scenario");
  }
}

}  // namespace orch::sim
