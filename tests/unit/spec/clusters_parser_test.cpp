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

TEST(ClustersParser, ReadsASlurmCluster) {
  auto r = parse_clusters_file(R"(clusters:
  - name: alpha
    provider: slurm
    nodes: 4
    gpus_per_node: 8
    accelerator: h100
    storage: {root: /scratch/orch}
    ssh:
      host: login.alpha.example
      port: 2222
      user: train
      key_file: ~/.ssh/id_ed25519
      key_passphrase_env: ALPHA_KEY_PASS
      host_key: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8
      trust_on_first_use: false
      connect_timeout_s: 5
      command_timeout_s: 30
    slurm: {partition: gpu, account: team, qos: high, gres: "gpu:h100", time_limit: "2-00:00:00",
            pre_term_signal: TERM, pre_term_s: 300}
)",
                               "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ClusterSpec& a = r->clusters[0];
  EXPECT_EQ(a.provider, "slurm");
  EXPECT_EQ(a.storage_root, "/scratch/orch");
  EXPECT_EQ(a.ssh.host, "login.alpha.example");
  EXPECT_EQ(a.ssh.port, 2222);
  EXPECT_EQ(a.ssh.user, "train");
  EXPECT_EQ(a.ssh.key_file, "~/.ssh/id_ed25519");
  EXPECT_EQ(a.ssh.key_passphrase_env, "ALPHA_KEY_PASS");
  EXPECT_EQ(a.ssh.host_key, "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8");
  EXPECT_FALSE(a.ssh.trust_on_first_use);
  EXPECT_EQ(a.ssh.connect_timeout_s, 5.0);
  EXPECT_EQ(a.ssh.command_timeout_s, 30.0);
  EXPECT_EQ(a.slurm.partition, "gpu");
  EXPECT_EQ(a.slurm.account, "team");
  EXPECT_EQ(a.slurm.qos, "high");
  EXPECT_EQ(a.slurm.gres, "gpu:h100");
  EXPECT_EQ(a.slurm.time_limit, "2-00:00:00");
  EXPECT_EQ(a.slurm.pre_term_signal, "TERM");
  EXPECT_EQ(a.slurm.pre_term_s, 300);
}

TEST(ClustersParser, ReadsAKubernetesCluster) {
  auto r = parse_clusters_file(R"(clusters:
  - name: gke
    provider: kubernetes
    nodes: 4
    gpus_per_node: 8
    accelerator: h100
    kubernetes:
      kubeconfig: ~/.kube/config
      context: gpu-cloud
      namespace: training
      image: nvcr.io/nvidia/pytorch:24.05-py3
      gpu_resource: nvidia.com/gpu
      termination_grace_s: 300
)",
                               "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const KubernetesSpec& k = r->clusters[0].kubernetes;
  EXPECT_EQ(r->clusters[0].provider, "kubernetes");
  EXPECT_EQ(k.kubeconfig, "~/.kube/config");
  EXPECT_EQ(k.context, "gpu-cloud");
  EXPECT_EQ(k.namespace_, "training");
  EXPECT_EQ(k.pod.image, "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(k.gpu_resource, "nvidia.com/gpu");
  EXPECT_EQ(k.termination_grace_s, 300);
}

TEST(ClustersParser, SlurmDefaults) {
  auto r = parse_clusters_file(R"(clusters:
  - name: beta
    provider: slurm
    storage: {root: /r}
    ssh: {host: h, user: u, key_file: /k, trust_on_first_use: true}
)",
                               "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ClusterSpec& b = r->clusters[0];
  EXPECT_EQ(b.ssh.port, 22);
  EXPECT_TRUE(b.ssh.trust_on_first_use);
  EXPECT_EQ(b.ssh.connect_timeout_s, 10.0);
  EXPECT_EQ(b.slurm.gres, "gpu");
  EXPECT_EQ(b.slurm.pre_term_signal, "USR1");
  EXPECT_EQ(b.slurm.pre_term_s, 120);
  EXPECT_EQ(b.slurm.partition, "");
}

TEST(ClustersParser, WebhooksNameTheirEventsAndSecret) {
  auto r = parse_clusters_file(
      "clusters: [{name: a}]\n"
      "webhooks:\n"
      "  - {name: ops, url: 'https://hooks.example.com/o', events: [job-failed, site-down],\n"
      "     secret: {file: /etc/o/hook.key}, format: slack}\n",
      "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->webhooks.size(), 1u);
  const WebhookSpec& w = r->webhooks[0];
  EXPECT_EQ(w.name, "ops");
  EXPECT_EQ(w.url, "https://hooks.example.com/o");
  EXPECT_EQ(w.events, (std::vector<std::string>{"job-failed", "site-down"}));
  EXPECT_EQ(w.secret.file, "/etc/o/hook.key");
  EXPECT_EQ(w.format, "slack");
}

TEST(ClustersParser, ServerTlsNamesTheCertificateAndKey) {
  auto r = parse_clusters_file(
      "server: {bind: 0.0.0.0, tls: {cert: /etc/o/server.crt, key: /etc/o/server.key}}\n"
      "clusters: [{name: a}]\n",
      "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->server.serves_tls());
  EXPECT_EQ(r->server.tls.cert, "/etc/o/server.crt");
  EXPECT_EQ(r->server.tls.key, "/etc/o/server.key");
  auto plain = parse_clusters_file("clusters: [{name: a}]\n", "clusters.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->server.serves_tls());
}

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

TEST(ClustersParser, ReadsTheUserALocalSiteRunsJobsAs) {
  auto r = parse_clusters_file(
      "clusters:\n  - {name: a, provider: local, local: {run_as: orchestrate-job}}\n"
      "  - {name: b}\n",
      "c.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->clusters.at(0).local.run_as, "orchestrate-job");
  EXPECT_EQ(r->clusters.at(1).local.run_as, "");  // the server's own user (refused as root)
}

TEST(ClustersParser, ReadsEachNodesOwnDirectory) {
  auto r = parse_clusters_file(
      "clusters:\n  - {name: a, storage: {node_local: \"/disks/{node}/orch\"}}\n"
      "  - {name: b}\n",
      "c.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->clusters.at(0).node_local_root, "/disks/{node}/orch");
  EXPECT_EQ(r->clusters.at(1).node_local_root, "");  // no node tier: every save is shared
}

TEST(ClustersParser, ReadsHowManyHotSparesAClusterHolds) {
  auto r = parse_clusters_file("clusters:\n  - {name: a, nodes: 4, spares: 1}\n  - {name: b}\n",
                               "c.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->clusters.at(0).spares, 1);
  EXPECT_EQ(r->clusters.at(1).spares, 0);  // none unless asked for
}

TEST(ClustersParser, ReadsAPromisedDelivery) {
  auto r = parse_clusters_file("clusters:\n  - name: a\n    delivery: {promised: 2026-12-10}\n",
                               "c.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const DeliverySpec& d = r->clusters.at(0).delivery;
  EXPECT_EQ(d.promised, "2026-12-10");
  EXPECT_EQ(d.promised_ms, 1796860800000);  // 2026-12-10T00:00:00Z
  auto none = parse_clusters_file("clusters: [{name: a}]", "c.yaml");
  EXPECT_EQ(none->clusters.at(0).delivery.promised_ms, std::nullopt);
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
    {"node_local relative", "clusters:\n  - {name: a, storage: {node_local: local/orch}}\n", "2:37",
     "\"node_local\" must be an absolute path in normal form"},
    {"node_local on kubernetes",
     "clusters:\n  - name: a\n    provider: kubernetes\n    kubernetes: {kubeconfig: k, image: i}\n"
     "    storage: {node_local: /local}\n",
     "5:27", "provider kubernetes cannot start a job on a named node"},
    {"spares as many as nodes", "clusters:\n  - {name: a, nodes: 2, spares: 2}\n", "2:33",
     "\"spares\" must be below the cluster's 2 node(s), got 2"},
    {"spares negative", "clusters:\n  - {name: a, nodes: 2, spares: -1}\n", "2:33",
     "\"spares\" must be an integer >= 0"},
    {"spares on kubernetes",
     "clusters:\n  - name: a\n    provider: kubernetes\n    kubernetes: {kubeconfig: k, image: i}\n"
     "    nodes: 4\n    spares: 1\n",
     "6:13",
     "provider kubernetes cannot start a job on a named node, so it cannot hold hot spares"},
    {"slurm without ssh", "clusters:\n  - name: a\n    provider: slurm\n", "2:5",
     "cluster \"a\" has provider slurm but no \"ssh\" section; expected ssh {host, user, "
     "key_file}"},
    {"slurm ssh without user",
     "clusters:\n  - name: a\n    provider: slurm\n    ssh: {host: h, key_file: k}\n", "4:10",
     "missing required key \"user\" in ssh"},
    {"slurm no host-key check",
     "clusters:\n  - name: a\n    provider: slurm\n    storage: {root: /r}\n"
     "    ssh: {host: h, user: u, key_file: k}\n",
     "5:10",
     "ssh of cluster \"a\" gives no way to check the login node's host key; expected host_key"},
    {"slurm bad fingerprint",
     "clusters:\n  - name: a\n    provider: slurm\n"
     "    ssh: {host: h, user: u, key_file: k, host_key: MD5:aa}\n",
     "4:52", "\"host_key\" must be a SHA256 fingerprint"},
    {"slurm tofu not a bool",
     "clusters:\n  - name: a\n    provider: slurm\n"
     "    ssh: {host: h, user: u, key_file: k, trust_on_first_use: yes}\n",
     "4:62", "\"trust_on_first_use\" must be true or false, got \"yes\""},
    {"slurm without storage root",
     "clusters:\n  - name: a\n    provider: slurm\n"
     "    ssh: {host: h, user: u, key_file: k, known_hosts: /kh}\n",
     "2:5", "cluster \"a\" has provider slurm but no storage.root"},
    {"slurm typo", "clusters:\n  - name: a\n    provider: slurm\n    slurm: {partiton: p}\n",
     "4:13", "unknown key \"partiton\" in slurm; did you mean \"partition\"?"},
    {"ssh on a local cluster", "clusters:\n  - name: a\n    ssh: {host: h}\n", "3:5",
     "\"ssh\" applies only to provider slurm, and cluster \"a\" has provider local"},
    {"run_as on a slurm cluster",
     "clusters:\n  - name: a\n    provider: slurm\n    local: {run_as: orchestrate-job}\n", "4:5",
     "\"local\" applies only to provider local, and cluster \"a\" has provider slurm"},
    {"run_as not a user name", "clusters:\n  - name: a\n    local: {run_as: \"bob; rm\"}\n", "3:21",
     "\"run_as\" must be a user name"},
    {"run_as empty", "clusters:\n  - name: a\n    local: {run_as: \"\"}\n", "3:21",
     "\"run_as\" must be a user name"},
    {"run_as starts with a digit", "clusters:\n  - name: a\n    local: {run_as: 1000}\n", "3:21",
     "\"run_as\" must be a user name"},
    {"local typo", "clusters:\n  - name: a\n    local: {runas: nobody}\n", "3:13",
     "unknown key \"runas\" in local; did you mean \"run_as\"?"},
    {"kubernetes without section", "clusters:\n  - name: a\n    provider: kubernetes\n", "2:5",
     "cluster \"a\" has provider kubernetes but no \"kubernetes\" section"},
    {"kubernetes without image",
     "clusters:\n  - name: a\n    provider: kubernetes\n    kubernetes: {kubeconfig: /k}\n", "4:17",
     "missing required key \"image\" in kubernetes"},
    {"kubernetes typo",
     "clusters:\n  - name: a\n    provider: kubernetes\n    kubernetes: {kubeconfg: /k}\n", "4:18",
     "unknown key \"kubeconfg\" in kubernetes; did you mean \"kubeconfig\"?"},
    {"kubernetes on a slurm cluster",
     "clusters:\n  - name: a\n    provider: slurm\n    kubernetes: {kubeconfig: /k}\n", "4:5",
     "\"kubernetes\" applies only to provider kubernetes, and cluster \"a\" has provider slurm"},
    {"unknown provider", "clusters: [{name: a, provider: aws}]\n", "1:32",
     "\"provider\" must be one of local, slurm, kubernetes, got \"aws\"; expected local"},
    {"bad pre-term signal",
     "clusters:\n  - name: a\n    provider: slurm\n    slurm: {pre_term_signal: usr1}\n", "4:30",
     "\"pre_term_signal\" must be a signal name such as USR1"},
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
     "\"unreachable_grace_s\" must be a number from 0 to 2592000, got \"-1\""},
    {"poll too fast", "clusters: [{name: a, poll_interval_ms: 5}]\n", "1:40",
     "\"poll_interval_ms\" must be an integer from 10 to 60000, got \"5\""},
    {"poll too slow", "clusters: [{name: a, poll_interval_ms: 60001}]\n", "1:40",
     "\"poll_interval_ms\" must be an integer from 10 to 60000"},
    {"port too big", "server: {port: 70000}\nclusters: [{name: a}]\n", "1:16",
     "\"port\" must be an integer from 0 to 65535, got \"70000\"; expected a TCP port"},
    {"webhooks a map", "clusters: [{name: a}]\nwebhooks: {url: x}\n", "2:11",
     "\"webhooks\" must be a list"},
    {"webhook without secret",
     "clusters: [{name: a}]\nwebhooks: [{name: w, url: 'http://h/x', events: [job-failed]}]\n",
     "2:12", "missing required key \"secret\" in webhooks[0]"},
    {"webhook bad url",
     "clusters: [{name: a}]\nwebhooks: [{name: w, url: ftp://h, events: [job-failed], "
     "secret: {env: K}}]\n",
     "2:27", "webhook \"w\": invalid server URL 'ftp://h': it must start with http:// or https://"},
    {"webhook url without a host",
     "clusters: [{name: a}]\nwebhooks: [{name: w, url: 'http:///x', events: [job-failed], "
     "secret: {env: K}}]\n",
     "2:27", "webhook \"w\": invalid server URL 'http:///x': no host"},
    {"webhook url with a space",
     "clusters: [{name: a}]\nwebhooks: [{name: w, url: 'http://hooks example.com/x', "
     "events: [job-failed], secret: {env: K}}]\n",
     "2:27", "it holds a space"},
    {"webhook url with credentials",
     "clusters: [{name: a}]\nwebhooks: [{name: w, url: 'https://u:p@h/x', events: [job-failed], "
     "secret: {env: K}}]\n",
     "2:27", "credentials (user@) do not belong in it"},
    {"webhook unknown event",
     "clusters: [{name: a}]\nwebhooks: [{name: w, url: 'http://h/x', events: [job-faild], "
     "secret: {env: K}}]\n",
     "2:49", "unknown event \"job-faild\" (did you mean \"job-failed\"?)"},
    {"webhook relative secret",
     "clusters: [{name: a}]\nwebhooks: [{name: w, url: 'http://h/x', events: [site-down], "
     "secret: {file: k.txt}}]\n",
     "2:77", "webhook \"w\".secret.file is a relative path"},
    {"tls without a key", "server: {tls: {cert: /c.pem}}\nclusters: [{name: a}]\n", "1:15",
     "missing required key \"key\" in server.tls"},
    {"tls a string", "server: {tls: /c.pem}\nclusters: [{name: a}]\n", "1:15",
     "server.tls must be a map"},
    {"tls typo", "server: {tls: {cert: /c, key: /k, ca: /x}}\nclusters: [{name: a}]\n", "1:35",
     "unknown key \"ca\" in server.tls"},
    {"storage a string", "clusters: [{name: a, storage: /data}]\n", "1:31",
     "storage must be a map, got \"/data\""},
    {"storage typo", "clusters: [{name: a, storage: {rot: /x}}]\n", "1:32",
     "unknown key \"rot\" in storage; did you mean \"root\"?"},
    {"burn-in compute beyond the agent's limit",
     "clusters:\n  - name: a\n    burn_in: {compute_s: 3601}\n", "3:26",
     "\"compute_s\" must be a number > 0 and <= 3600, got \"3601\""},
    {"burn-in io beyond the agent's limit", "clusters:\n  - name: a\n    burn_in: {io_mb: 2e6}\n",
     "3:22", "\"io_mb\" must be a number > 0 and <= 1048576"},
    {"ssh timeout beyond a year",
     "clusters:\n  - name: a\n    provider: slurm\n    ssh: {command_timeout_s: 1e300}\n", "4:30",
     "\"command_timeout_s\" must be a number > 0 and <= 31536000"},
    {"grace beyond 30 days", "clusters:\n  - name: a\n    unreachable_grace_s: 1e9\n", "3:26",
     "\"unreachable_grace_s\" must be a number from 0 to 2592000"},
    {"namespace not a DNS label",
     "clusters:\n  - name: a\n    provider: kubernetes\n    kubernetes: {kubeconfig: k, image: i, "
     "namespace: Team_A}\n",
     "4:54", "\"namespace\" must be a DNS-1123 label"},
    {"invalid UTF-8 in a path", "clusters:\n  - name: a\n    storage: {root: \"/data/\xC3\"}\n",
     "3:21", "clusters[0].storage.root: invalid UTF-8 at byte offset 6 (0xc3); expected UTF-8"},
    {"unknown tag", "clusters:\n  - name: a\n    nodes: !!python/object 2\n", "3:12",
     "clusters[0].nodes: unknown tag !!python/object; expected no tag, or one of the YAML core"},
    {"delivery not a date", "clusters:\n  - name: a\n    delivery: {promised: next week}\n", "3:26",
     "\"promised\" must be a date YYYY-MM-DD, got \"next week\""},
    {"delivery on a day that does not exist",
     "clusters:\n  - name: a\n    delivery: {promised: 2026-02-30}\n", "3:26",
     "must be a date YYYY-MM-DD, got \"2026-02-30\""},
    {"delivery typo", "clusters:\n  - name: a\n    delivery: {promise: 2026-12-10}\n", "3:16",
     "unknown key \"promise\" in delivery; did you mean \"promised\"?"},
    {"unclosed quote", "clusters:\n  - name: 'alpha\n    nodes: 2\n", "2:11",
     "clusters[0].name: the ' that starts this string is never closed"},
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
