// The planted tree's parser: the keys its docs may name (tests/docs/README.md).
#include "scheduler/spec/yaml_reader.h"

namespace orch {

void read_planted_job(yaml::Reader& reader, const YAML::Node& root) {
  yaml::MapView job(reader, root, "job", {"name", "command", "env", "resources"}, "a map");
  yaml::MapView res = job.child("resources", "resources", {"nodes", "gpus_per_node"}, "a map");
}

}  // namespace orch
