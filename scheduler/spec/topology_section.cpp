#include "scheduler/spec/topology_section.h"

#include "scheduler/spec/pod_settings_section.h"

namespace orch {

void read_topology(const yaml::MapView& job, TopologyHint& out) {
  if (!job.has("topology")) return;
  yaml::Reader& r = job.reader();
  yaml::MapView t = job.child(
      "topology", "topology", {"level", "required", "switches", "switches_wait_s"},
      "a map such as {level: cloud.provider.com/topology-block, required: true} or {switches: 1}");
  if (r.failed()) return;
  t.read_string("level", out.level,
                {is_label_key, "a node label key such as cloud.provider.com/topology-block"},
                "the node label of a topology level (Kueue's topology-aware scheduling)");
  t.read_bool("required", out.required, "true (one domain of the level, or wait) or false");
  t.read_int("switches", out.switches, 1, 1000000, "a number of leaf switches, 1 or more");
  t.read_int("switches_wait_s", out.switches_wait_s, 1, 365 * 86400,
             "seconds to wait for them, such as 600");
  if (r.failed()) return;
  if (out.empty()) {
    r.fail(t.position(), "\"topology\" says nothing",
           "level: <node label key> for Kubernetes (Kueue), switches: N for Slurm, or both");
  } else if (t.has("required") && out.level.empty()) {
    r.fail(t.key_position("required"), "topology.required without a level",
           "level: <node label key>, the level the gang must (or should) fit in");
  } else if (t.has("switches_wait_s") && out.switches == 0) {
    r.fail(t.key_position("switches_wait_s"), "topology.switches_wait_s without switches",
           "switches: N, the leaf switches to wait for");
  }
}

}  // namespace orch
