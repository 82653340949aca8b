// A cluster's live_watch (issue 43): the defaults, every key read, the flags the sites give each
// task's agent, and each mistake worded with its file:line:col like the rest of the file.
#include <gmock/gmock.h>

#include "scheduler/spec/clusters_parser.h"

namespace orch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string error_of(const std::string& yaml) {
  auto r = parse_clusters_file(yaml, "clusters.yaml");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

TEST(LiveWatchSpec, AClusterWithoutTheMapWatchesAtTheAgentsDefaults) {
  auto file = parse_clusters_file("clusters: [{name: a}]\n", "clusters.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  const LiveWatchSpec& w = file->clusters.at(0).live_watch;
  EXPECT_EQ(w.watch_s, 2);
  EXPECT_EQ(w.gpu_sample_s, 30);
  EXPECT_FALSE(w.stop_on_fault);
  EXPECT_THAT(live_watch_flags(w), ElementsAre("--watch-s", "2", "--gpu-sample-s", "30",
                                               "--fault-action", "record"));
}

TEST(LiveWatchSpec, EveryKeyIsReadAndBecomesTheAgentsFlags) {
  auto file = parse_clusters_file(
      "clusters:\n  - name: a\n    live_watch: {watch_s: 0.5, kernel_log: \"/shared/k/{node}.log\","
      " nvidia_smi: none, gpu_sample_s: 0, fault_action: stop}\n",
      "clusters.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_THAT(live_watch_flags(file->clusters.at(0).live_watch),
              ElementsAre("--watch-s", "0.5", "--gpu-sample-s", "0", "--fault-action", "stop",
                          "--kernel-log", "/shared/k/{node}.log", "--nvidia-smi", "none"));
}

TEST(LiveWatchSpec, MistakesSayWhereAndWhy) {
  EXPECT_THAT(error_of("clusters:\n  - name: a\n    live_watch: {fault_action: kill}\n"),
              HasSubstr("clusters.yaml:3:32: \"fault_action\" must be record or stop"));
  EXPECT_THAT(error_of("clusters:\n  - name: a\n    live_watch: {watch_s: 0.01}\n"),
              HasSubstr("\"watch_s\" must be 0 or at least 0.1 seconds"));
  EXPECT_THAT(error_of("clusters:\n  - name: a\n    live_watch: {watch: 2}\n"),
              HasSubstr("watch"));
}

}  // namespace
}  // namespace orch
