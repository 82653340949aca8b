// Issue 40, items 3 and 5: a job's `shell:`, resources.cpus_per_task and resources.memory, its
// `slurm:` section and a cluster's slurm defaults and job_options rules: what they read into,
// what they refuse and where (no value can become another sbatch option), that a stored spec
// keeps them, and how a cluster's rules judge a job's options.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/job_spec_json.h"
#include "scheduler/spec/job_spec_parser.h"
#include "scheduler/spec/slurm_job_rules.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

Result<JobSpec> job(const std::string& extra) {
  return parse_job_spec("name: t\ncommand: python train.py\n" + extra, "job.yaml");
}

Result<ClustersFile> slurm_cluster(const std::string& slurm_lines) {
  return parse_clusters_file(
      "clusters:\n  - name: alpha\n    provider: slurm\n    nodes: 2\n    gpus_per_node: 8\n"
      "    storage:\n      root: /shared/orch\n"
      "    ssh: {host: login, user: u, key_file: /k, trust_on_first_use: true}\n"
      "    slurm:\n" +
          slurm_lines,
      "c.yaml");
}

TEST(JobShapeSpec, ShellIsUnsetByDefaultAndReadsEachSpelling) {
  auto plain = job("");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->shell, "");
  for (const char* shell : {"bash", "sh", "bash-login"}) {
    auto spec = job(std::string("shell: ") + shell + "\n");
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    EXPECT_EQ(spec->shell, shell);
  }
}

TEST(JobShapeSpec, AnUnknownShellIsRefusedAtItsValue) {
  auto spec = job("shell: zsh\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("job.yaml:3:8: \"shell\" is \"zsh\"; expected bash, "
                                              "sh or bash-login"));
  EXPECT_FALSE(job("shell: /bin/bash\n").ok());
  EXPECT_FALSE(job("shell: \"\"\n").ok());
}

TEST(JobShapeSpec, CpusAndMemoryReadIntoTheSpec) {
  auto spec = job("resources: {nodes: 2, cpus_per_task: 16, memory: 64G}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->cpus_per_task, 16);
  EXPECT_EQ(spec->memory_mb, 64 * 1024);
  EXPECT_EQ(job("resources: {memory: 512M}\n")->memory_mb, 512);
  EXPECT_EQ(job("resources: {memory: 1T}\n")->memory_mb, 1024 * 1024);
  EXPECT_EQ(job("resources: {memory: 80Gi}\n")->memory_mb, 80 * 1024);
  EXPECT_EQ(job("")->cpus_per_task, 0);
  EXPECT_EQ(job("")->memory_mb, 0);
}

TEST(JobShapeSpec, MemoryWithoutAUnitOrOutOfRangeIsRefused) {
  for (const char* bad : {"64", "64 G", "64GB!", "-1G", "0G", "G", "1.5G", "2000T", "64k"}) {
    auto spec = job(std::string("resources:\n  memory: \"") + bad + "\"\n");
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_THAT(spec.error().message, HasSubstr("job.yaml:4:11: \"memory\" must be a size")) << bad;
    EXPECT_THAT(spec.error().message, HasSubstr("such as 64G, 512M or 1T")) << bad;
  }
  auto list = job("resources: {memory: [64G]}\n");
  ASSERT_FALSE(list.ok());
}

TEST(JobShapeSpec, CpusPerTaskMustBeAPositiveInteger) {
  auto zero = job("resources: {cpus_per_task: 0}\n");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.error().message, HasSubstr("job.yaml:3:28:"));
  EXPECT_THAT(zero.error().message, HasSubstr("cpus_per_task"));
  EXPECT_FALSE(job("resources: {cpus_per_task: \"8\"}\n").ok());
  EXPECT_FALSE(job("resources: {cpus_per_task: 100000}\n").ok());
}

TEST(JobShapeSpec, TheSlurmSectionReadsEveryOption) {
  auto spec =
      job("slurm:\n  partition: gpu\n  account: proj-a\n  qos: high\n  reservation: maint_1\n"
          "  constraint: \"a100&ib|[h100*2]\"\n  exclusive: true\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->slurm.partition, "gpu");
  EXPECT_EQ(spec->slurm.account, "proj-a");
  EXPECT_EQ(spec->slurm.qos, "high");
  EXPECT_EQ(spec->slurm.reservation, "maint_1");
  EXPECT_EQ(spec->slurm.constraint, "a100&ib|[h100*2]");
  EXPECT_EQ(spec->slurm.exclusive, std::optional<bool>(true));
  EXPECT_FALSE(job("")->slurm.exclusive.has_value());
}

// Hostile values: each is refused at its own line and column, naming why.
TEST(JobShapeSpec, SlurmValuesThatCouldBecomeOptionsAreRefusedAtTheirLine) {
  struct Case {
    std::string yaml;
    std::string where;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"slurm:\n  constraint: \"gpu --wrap=id\"\n", "job.yaml:4:15:", "holds a blank"},
      {"slurm:\n  account: \"proj\\nexit 0\"\n", "job.yaml:4:12:", "holds a newline"},
      {"slurm:\n  qos: --qos=root\n", "job.yaml:4:8:", "starts with '-'"},
      {"slurm:\n  partition: \"gpu;id\"\n", "job.yaml:4:14:", "holds ';'"},
      {"slurm:\n  reservation: \"r\\tx\"\n", "job.yaml:4:16:", "holds the byte 0x09"},
      {"slurm:\n  account: \"$(id)\"\n", "job.yaml:4:12:", "holds '$'"},
      {"slurm:\n  constraint: \"a'b\"\n", "job.yaml:4:15:", "holds '''"},
      {"slurm:\n  account: \"\"\n", "job.yaml:4:12:", "it is empty"},
      {"slurm:\n  account: " + std::string(300, 'a') + "\n", "job.yaml:4:12:", "300 bytes"},
      {"slurm:\n  exclusive: yes\n", "job.yaml:4:14:", "exclusive"},
      {"slurm:\n  nodelist: n1\n", "job.yaml:4:3:", "unknown key \"nodelist\""},
      {"slurm:\n  qos: [a]\n", "job.yaml:4:8:", "must be a string"},
  };
  for (const auto& c : cases) {
    auto spec = job(c.yaml);
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_THAT(spec.error().message, HasSubstr(c.where)) << c.yaml;
    EXPECT_THAT(spec.error().message, HasSubstr(c.why)) << c.yaml;
  }
}

TEST(JobShapeSpec, AStoredSpecKeepsShellShapeAndSlurmOptions) {
  auto spec =
      job("shell: bash-login\nresources: {cpus_per_task: 4, memory: 1536M}\n"
          "slurm: {account: proj, constraint: a100, exclusive: false}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto back = job_spec_from_json(job_spec_to_json(*spec));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->shell, "bash-login");
  EXPECT_EQ(back->cpus_per_task, 4);
  EXPECT_EQ(back->memory_mb, 1536);
  EXPECT_EQ(back->slurm, spec->slurm);
  EXPECT_EQ(back->slurm.exclusive, std::optional<bool>(false));
  const auto plain = job_spec_to_json(*job(""));
  EXPECT_FALSE(plain.contains("shell"));
  EXPECT_FALSE(plain.contains("slurm"));
  EXPECT_FALSE(plain["resources"].contains("memory"));
}

TEST(JobShapeSpec, AClusterReadsItsSlurmDefaultsAndJobOptionRules) {
  auto file = slurm_cluster(
      "      partition: gpu\n      account: proj-a\n      reservation: r1\n"
      "      constraint: h100\n      exclusive: true\n"
      "      job_options: {account: pinned, qos: forbidden, exclusive: allowed}\n");
  ASSERT_TRUE(file.ok()) << file.error().message;
  const SlurmSpec& s = file->clusters.at(0).slurm;
  EXPECT_EQ(s.reservation, "r1");
  EXPECT_EQ(s.constraint, "h100");
  EXPECT_TRUE(s.exclusive);
  EXPECT_EQ(s.job_options.at("account"), SlurmOptionRule::pinned);
  EXPECT_EQ(s.job_options.at("qos"), SlurmOptionRule::forbidden);
  EXPECT_EQ(s.job_options.count("partition"), 0U);
}

TEST(JobShapeSpec, AClusterIsHeldToTheSameByteRulesAndKnownRules) {
  auto bad_value = slurm_cluster("      account: \"a b\"\n");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(bad_value.error().message, HasSubstr("c.yaml:10:16: \"account\" cannot be passed"));
  auto bad_rule = slurm_cluster("      job_options: {qos: sometimes}\n");
  ASSERT_FALSE(bad_rule.ok());
  EXPECT_THAT(bad_rule.error().message,
              HasSubstr("slurm.job_options.qos is \"sometimes\"; expected allowed"));
  auto bad_key = slurm_cluster("      job_options: {gres: pinned}\n");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_THAT(bad_key.error().message, HasSubstr("unknown key \"gres\""));
}

TEST(JobShapeSpec, ClusterRulesJudgeAJobsOptions) {
  SlurmSpec s;
  s.account = "proj-a";
  s.job_options = {{"account", SlurmOptionRule::pinned},
                   {"qos", SlurmOptionRule::forbidden},
                   {"exclusive", SlurmOptionRule::pinned}};
  SlurmJobOptions o;
  EXPECT_EQ(slurm_options_refused(s, o), "");
  o.account = "proj-a";  // the pinned value itself
  o.partition = "other";
  EXPECT_EQ(slurm_options_refused(s, o), "");
  o.account = "proj-b";
  EXPECT_EQ(slurm_options_refused(s, o),
            "slurm.account is pinned to proj-a on this cluster, the job asks for proj-b");
  o.account.clear();
  o.qos = "high";
  EXPECT_EQ(slurm_options_refused(s, o),
            "slurm.qos is forbidden on this cluster (the job sets it to high)");
  o.qos.clear();
  o.exclusive = true;
  EXPECT_THAT(slurm_options_refused(s, o), HasSubstr("slurm.exclusive is pinned to false"));
  o.exclusive = false;
  EXPECT_EQ(slurm_options_refused(s, o), "");
}

TEST(JobShapeSpec, TheJobsOptionsWinOverTheClustersExceptPinnedOnes) {
  SlurmSpec s;
  s.partition = "gpu";
  s.account = "proj-a";
  s.qos = "normal";
  s.job_options = {{"account", SlurmOptionRule::pinned}};
  SlurmJobOptions o;
  o.partition = "big";
  o.account = "proj-b";
  o.constraint = "a100";
  const SlurmJobOptions e = effective_slurm_options(s, o);
  EXPECT_EQ(e.partition, "big");
  EXPECT_EQ(e.account, "proj-a");
  EXPECT_EQ(e.qos, "normal");
  EXPECT_EQ(e.constraint, "a100");
  EXPECT_FALSE(e.exclusive.has_value());
}

// At submit: refused only when every cluster the job may run on is a Slurm cluster that will
// not take its options; the message names each and why.
TEST(JobShapeSpec, AJobNoAllowedClusterTakesIsRefusedAtSubmit) {
  ClusterSpec alpha;
  alpha.name = "alpha";
  alpha.provider = "slurm";
  alpha.slurm.job_options = {{"qos", SlurmOptionRule::forbidden}};
  ClusterSpec beta = alpha;
  beta.name = "beta";
  beta.slurm.account = "proj-a";
  beta.slurm.job_options = {{"qos", SlurmOptionRule::pinned}};
  ClusterSpec kube;
  kube.name = "gke";
  kube.provider = "kubernetes";
  JobSpec job = *orch::job("slurm: {qos: high}\n");
  auto refused = check_slurm_option_clusters(job, {alpha, beta});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().where, "slurm");
  EXPECT_THAT(refused.error().message,
              HasSubstr("alpha: slurm.qos is forbidden on this cluster (the job sets it to high); "
                        "beta: slurm.qos is pinned to the site's default on this cluster, the job "
                        "asks for high"));
  // A Kubernetes cluster ignores slurm:, so the job may go there.
  EXPECT_TRUE(check_slurm_option_clusters(job, {alpha, beta, kube}).ok());
  // Unless placement.allowed leaves only the Slurm clusters.
  job.allowed_clusters = {"alpha"};
  EXPECT_FALSE(check_slurm_option_clusters(job, {alpha, beta, kube}).ok());
  // A cluster that allows it takes it; a job with no slurm: is never refused here.
  beta.slurm.job_options.clear();
  job.allowed_clusters.clear();
  EXPECT_TRUE(check_slurm_option_clusters(job, {alpha, beta}).ok());
  EXPECT_TRUE(check_slurm_option_clusters(*orch::job(""), {alpha}).ok());
}

}  // namespace
}  // namespace orch
