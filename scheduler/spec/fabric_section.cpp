#include "scheduler/spec/fabric_section.h"

#include <cmath>

namespace orch {

void read_burn_in_fabric(const yaml::MapView& burn_in, FabricSpec& out) {
  yaml::MapView f = burn_in.child(
      "fabric", "burn_in.fabric",
      {"all_reduce_perf", "rounds", "min_busbw_ratio", "bytes", "timeout_s", "gpus_per_node"},
      "a map such as {all_reduce_perf: /opt/nccl-tests/build/all_reduce_perf, "
      "min_busbw_ratio: 0.6}");
  f.read_string("all_reduce_perf", out.all_reduce_perf, yaml::kAnyString,
                "the absolute path of nccl-tests' all_reduce_perf on the nodes (\"\": no fabric "
                "step)");
  if (!f.reader().failed() && !out.all_reduce_perf.empty() && out.all_reduce_perf[0] != '/') {
    f.reader().fail(f.value_position("all_reduce_perf"),
                    "\"all_reduce_perf\" must be an absolute path on the nodes, got \"" +
                        out.all_reduce_perf + "\"",
                    "/opt/nccl-tests/build/all_reduce_perf");
  }
  f.read_int("rounds", out.rounds, 0, 64, "a round count such as 3 (0: ceil(log2 nodes))");
  f.read_number("min_busbw_ratio", out.min_busbw_ratio, {0.0, false, 1.0},
                "a share of the median pair's bus bandwidth such as 0.6");
  double bytes = static_cast<double>(out.bytes);
  f.read_number("bytes", bytes, {1.0, false, 68719476736.0},
                "a message size in bytes such as 1073741824 (at most 64 GiB)");
  if (!f.reader().failed() && std::floor(bytes) != bytes) {
    f.reader().fail(f.value_position("bytes"), "\"bytes\" must be a whole number of bytes",
                    "1073741824");
  }
  out.bytes = static_cast<std::int64_t>(bytes);
  f.read_number("timeout_s", out.timeout_s, {0.0, true, 86400.0}, "seconds such as 120");
  f.read_int("gpus_per_node", out.gpus_per_node, 0, 1024,
             "GPUs per node such as 8 (0: the cluster's gpus_per_node)");
}

}  // namespace orch
