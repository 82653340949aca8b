// A launch with code or setup (issue 40) on Kubernetes: the pod's command runs task_prelude
// first (the code extracted, the setup run once, into ORCH_WORKDIR), then the job's shell; the
// prelude's variables are in the pod's env, its failure marker under the cluster's storage root.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "adapters/kubernetes/kube_manifest.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/workdir.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::request;

const std::string kHash(64, 'c');

ClusterSpec shared_cluster() {
  ClusterSpec c;
  c.name = "kube-east";
  c.provider = "kubernetes";
  c.storage_root = "/mnt/shared/orch";
  c.kubernetes.pod.image = "python:3.12";
  PodVolume v;
  v.name = "shared";
  v.claim = "orch-data";
  v.mount = "/mnt/shared";
  c.kubernetes.pod.volumes.push_back(v);
  return c;
}

// The launch_plan's fields for code and a setup at this cluster.
LaunchRequest with_code(LaunchRequest r, const ClusterSpec& c) {
  r.code_sha256 = kHash;
  r.code_archive = code_archive_path(c.storage_root, kHash);
  r.workdir = code_tree_path(c.storage_root, kHash);
  r.env["ORCH_WORKDIR"] = r.workdir;
  r.setup = "python -m venv .venv && echo \"$HOME\" >> setup_runs";
  r.setup_key = setup_key(c.name, kHash, r.setup, "");
  r.setup_dir = setup_dir_path(c.storage_root, r.setup_key);
  return r;
}

json container_of(const LaunchRequest& r, const ClusterSpec& c) {
  auto plan = make_launch_plan(r, c, "ml");
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  if (!plan.ok()) return json::object();
  return json::parse(plan->job_body)["spec"]["template"]["spec"]["containers"][0];
}

// The env as the process gets it (the kubelet reads "$$" back as "$").
std::map<std::string, std::string> env_of(const json& c) {
  std::map<std::string, std::string> env;
  for (const auto& e : c["env"]) {
    if (e.contains("value"))
      env[e["name"]] = expand_kube_references(e["value"].get<std::string>(), {});
  }
  return env;
}

json as_run(const std::vector<std::string>& argv) {
  return json(argv);
}

json expanded(const json& command) {
  json out = json::array();
  for (const auto& w : command) out.push_back(expand_kube_references(w.get<std::string>(), {}));
  return out;
}

TEST(kube_workdir, WithCodeAndSetupThePreludeRunsFirstWithItsVariablesInTheEnv) {
  const ClusterSpec c = shared_cluster();
  LaunchRequest r = with_code(request(), c);
  const json container = container_of(r, c);

  std::vector<std::string> want = {"/bin/sh", "-c", task_prelude(r), "orch-task"};
  for (const auto& w : job_shell_argv(r.shell, r.command)) want.push_back(w);
  EXPECT_EQ(expanded(testing::job_words(container)), as_run(want));
  EXPECT_THAT(task_prelude(r), HasSubstr("cd -- \"$ORCH_WORKDIR\""));

  const auto env = env_of(container);
  EXPECT_EQ(env.at("ORCH_WORKDIR"), "/mnt/shared/orch/code/" + kHash);
  EXPECT_EQ(env.at("ORCH_CODE_ARCHIVE"), "/mnt/shared/orch/code/" + kHash + ".tar");
  EXPECT_EQ(env.at("ORCH_SETUP_DIR"), "/mnt/shared/orch/setup/" + r.setup_key);
  EXPECT_EQ(env.at("ORCH_SETUP_COMMAND"), r.setup);  // its '$' reach the shell as written
  EXPECT_EQ(env.at("ORCH_SETUP_FAILED"), "/mnt/shared/orch/setup/failed." + r.token);
  EXPECT_EQ(setup_failed_marker(c, r.token), env.at("ORCH_SETUP_FAILED"));
}

TEST(kube_workdir, WithoutCodeOrSetupTheCommandRunsAsItIs) {
  const ClusterSpec c = shared_cluster();
  const LaunchRequest r = request();
  const json container = container_of(r, c);
  EXPECT_EQ(expanded(testing::job_words(container)), as_run(job_shell_argv(r.shell, r.command)));
  for (const char* name : {"ORCH_WORKDIR", "ORCH_CODE_ARCHIVE", "ORCH_SETUP_DIR",
                           "ORCH_SETUP_COMMAND", "ORCH_SETUP_FAILED"}) {
    EXPECT_EQ(env_of(container).count(name), 0U) << name;
  }
}

TEST(kube_workdir, ASetupWithoutCodeRunsInTheSetupDirectoryWithoutExtracting) {
  const ClusterSpec c = shared_cluster();
  LaunchRequest r = with_code(request(), c);
  r.code_sha256.clear();
  r.code_archive.clear();
  r.workdir.clear();
  r.env.erase("ORCH_WORKDIR");
  const json container = container_of(r, c);
  EXPECT_EQ(testing::job_words(container)[3], "orch-task");
  EXPECT_THAT(expand_kube_references(testing::job_words(container)[2].get<std::string>(), {}),
              ::testing::Not(HasSubstr("tar -x")));
  const auto env = env_of(container);
  EXPECT_EQ(env.count("ORCH_WORKDIR"), 0U);
  EXPECT_EQ(env.count("ORCH_CODE_ARCHIVE"), 0U);
  EXPECT_EQ(env.at("ORCH_SETUP_COMMAND"), r.setup);
}

}  // namespace
}  // namespace orch::kube
