// What the clusters file accepts and how each mistake in it is reported.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "scheduler/spec/clusters_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const char* kExample = R"(# Two local sites for the demo.
server: {bind: 0.0.0.0, port: 9090}
clusters:
  - name: alpha
    provider: local
    nodes: 2
    gpus_per_node: 4
    accelerator: cpu-slot
    storage: {root: /var/lib/orch/alpha, checkpoints: /shared/ckpt}
    unreachable_grace_s: 5
    poll_interval_ms: 200
  - name: beta
    accelerator: tpu-v9
    peak_tflops: 0.01
)";

TEST(ClustersParser, ReadsEveryFieldAndDefaults) {
  auto r = parse_clusters_file(kExample, "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server.bind, "0.0.0.0");
  EXPECT_EQ(r->server.port, 9090);
  ASSERT_EQ(r->clusters.size(), 2u);
  const ClusterSpec& a = r->clusters[0];
  EXPECT_EQ(a.name, "alpha");
  EXPECT_EQ(a.provider, "local");
  EXPECT_EQ(a.total_gpus(), 8);
  EXPECT_EQ(a.accelerator, "cpu-slot");
  EXPECT_FALSE(a.peak_tflops.has_value());
  EXPECT_EQ(a.storage_root, "/var/lib/orch/alpha");
  EXPECT_EQ(a.checkpoint_root, "/shared/ckpt");
  EXPECT_EQ(a.unreachable_grace_s, 5.0);
  EXPECT_EQ(a.poll_interval_ms, 200);
  // beta leaves everything but its name and accelerator to the documented defaults; an
  // accelerator outside the table is fine because it states its own peak.
  const ClusterSpec& b = r->clusters[1];
  EXPECT_EQ(b.provider, "local");
  EXPECT_EQ(b.nodes, 1);
  EXPECT_EQ(b.gpus_per_node, 1);
  EXPECT_EQ(b.accelerator, "tpu-v9");
  EXPECT_EQ(b.peak_tflops, 0.01);
  EXPECT_EQ(b.storage_root, "");
  EXPECT_EQ(b.unreachable_grace_s, 180.0);
  EXPECT_EQ(b.poll_interval_ms, 1000);
}

TEST(ClustersParser, ServerDefaultsWhenAbsent) {
  auto r = parse_clusters_file("clusters: [{name: a}]", "c.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server.bind, "127.0.0.1");
  EXPECT_EQ(r->server.port, 8080);
  EXPECT_EQ(r->clusters.at(0).accelerator, "cpu-slot");
}

struct BadClusters {
  const char* why;
  std::string yaml;
  std::string where;
  std::string message;
};

const BadClusters kBad[] = {
    {"empty", "", "1:1", "the document is empty; expected a clusters file"},
    {"a list", "- name: a\n", "1:1", "the clusters file must be a map, got a list"},
    {"no clusters", "server: {port: 1}\n", "1:1",
     "missing required key \"clusters\" in the clusters file; expected a list of clusters"},
    {"empty clusters", "clusters: []\n", "1:11",
     "\"clusters\" must be a non-empty list, got an empty list"},
    {"clusters a map", "clusters: {name: a}\n", "1:11",
     "\"clusters\" must be a non-empty list, got a map"},
    {"entry a scalar", "clusters:\n  - alpha\n", "2:5", "clusters[0] must be a map, got \"alpha\""},
    {"entry null", "clusters:\n  -\n", "2:3",
     "each cluster must be a map, got null at clusters[0]"},
    {"entry without name", "clusters:\n  - nodes: 2\n", "2:5",
     "missing required key \"name\" in clusters[0]; expected a cluster name such as alpha"},
    {"top typo", "cluster: []\n", "1:1",
     "unknown key \"cluster\" in the clusters file; did you mean \"clusters\"?"},
    {"entry typo", "clusters:\n  - name: a\n    gpus_per_nod: 2\n", "3:5",
     "unknown key \"gpus_per_nod\" in cluster \"a\"; did you mean \"gpus_per_node\"?"},
    {"slurm not yet", "clusters:\n  - name: a\n    provider: slurm\n", "3:15",
     "provider \"slurm\" is not supported yet; expected local"},
    {"kubernetes not yet", "clusters: [{name: a, provider: kubernetes}]\n", "1:32",
     "provider \"kubernetes\" is not supported yet; expected local"},
    {"unknown provider", "clusters: [{name: a, provider: aws}]\n", "1:32",
     "\"provider\" must be one of local, slurm, kubernetes, got \"aws\"; expected local"},
    {"bad name", "clusters: [{name: \"a b\"}]\n", "1:19", "\"name\" must be 1 to 64 letters"},
    {"duplicate name", "clusters:\n  - name: alpha\n  - name: beta\n  - name: alpha\n", "4:11",
     "duplicate cluster name \"alpha\"; expected a unique name (\"alpha\" is already used at line "
     "2)"},
    {"nodes zero", "clusters: [{name: a, nodes: 0}]\n", "1:29",
     "\"nodes\" must be an integer >= 1, got \"0\""},
    {"unknown accelerator", "clusters: [{name: a, accelerator: h1000}]\n", "1:35",
     "unknown accelerator \"h1000\" (did you mean \"h100\"?); expected one of a100"},
    {"peak zero", "clusters: [{name: a, peak_tflops: 0}]\n", "1:35",
     "\"peak_tflops\" must be a number > 0, got \"0\""},
    {"grace negative", "clusters: [{name: a, unreachable_grace_s: -1}]\n", "1:43",
     "\"unreachable_grace_s\" must be a number >= 0, got \"-1\""},
    {"poll too fast", "clusters: [{name: a, poll_interval_ms: 5}]\n", "1:40",
     "\"poll_interval_ms\" must be an integer from 10 to 60000, got \"5\""},
    {"poll too slow", "clusters: [{name: a, poll_interval_ms: 60001}]\n", "1:40",
     "\"poll_interval_ms\" must be an integer from 10 to 60000"},
    {"port too big", "server: {port: 70000}\nclusters: [{name: a}]\n", "1:16",
     "\"port\" must be an integer from 0 to 65535, got \"70000\"; expected a TCP port"},
    {"storage a string", "clusters: [{name: a, storage: /data}]\n", "1:31",
     "storage must be a map, got \"/data\""},
    {"storage typo", "clusters: [{name: a, storage: {rot: /x}}]\n", "1:32",
     "unknown key \"rot\" in storage; did you mean \"root\"?"},
};

class BadClustersFile : public ::testing::TestWithParam<BadClusters> {};

TEST_P(BadClustersFile, IsRejectedWithPositionAndReason) {
  const BadClusters& row = GetParam();
  auto r = parse_clusters_file(row.yaml, "clusters.yaml");
  ASSERT_FALSE(r.ok()) << row.why << ": accepted";
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, StartsWith("clusters.yaml:" + row.where + ": ")) << row.why;
  EXPECT_THAT(r.error().message, HasSubstr(row.message)) << row.why;
}

INSTANTIATE_TEST_SUITE_P(Table, BadClustersFile, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadClusters>& param_info) {
                           std::string name = param_info.param.why;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(LoadClustersFile, MissingFileIsAnIoErrorNamingThePath) {
  auto r = load_clusters_file("/nonexistent/dir/clusters.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::io);
  EXPECT_THAT(r.error().message,
              HasSubstr("cannot read clusters file \"/nonexistent/dir/clusters.yaml\": No such "
                        "file or directory"));
}

TEST(LoadClustersFile, DirectoryIsAnIoError) {
  auto r = load_clusters_file(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::io);
  EXPECT_THAT(r.error().message, HasSubstr("it is a directory"));
}

TEST(LoadClustersFile, ReadsAFileAndNamesItInErrors) {
  auto dir =
      std::filesystem::temp_directory_path() /
      ("orch_spec_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "clusters.yaml").string();
  { std::ofstream(path) << kExample; }
  auto good = load_clusters_file(path);
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->clusters.size(), 2u);
  { std::ofstream(path) << "clusters:\n  - name: a\n    nodes: many\n"; }
  auto bad = load_clusters_file(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, StartsWith(path + ":3:12: \"nodes\" must be an integer"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orch
