// The example files (examples/README.md) read as orchestrate reads them, so that they never rot:
// clusters files (examples/clusters*.yaml) by the clusters file's parser, job specs
// (examples/jobs/) by the job spec's parser, scenarios (examples/simulate/) by the simulator's.
// The folder is listed when the test runs: a new example is checked without a line here, and a
// YAML file that none of them reads fails until it is put where one does.
#include <gmock/gmock.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/container_support.h"
#include "scheduler/spec/job_spec_parser.h"
#include "scheduler/spec/scheduling_section.h"
#include "scheduler/spec/slurm_job_rules.h"
#include "scheduler/spec/sweep.h"
#include "simulator/fleet_scenario.h"
#include "simulator/scenario.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = fs::path(ORCH_SOURCE_DIR) / "examples";

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file's path under examples/, as examples/README.md names it ("jobs/toy.yaml").
std::string rel(const fs::path& path) {
  return fs::relative(path, kExamples).generic_string();
}

enum class Kind { clusters, job, scenario, unknown };

Kind kind_of(const fs::path& path) {
  const std::string r = rel(path);
  if (r.rfind("jobs/", 0) == 0) return Kind::job;
  if (r.rfind("simulate/", 0) == 0) return Kind::scenario;
  if (r.find('/') == std::string::npos && r.rfind("clusters", 0) == 0) return Kind::clusters;
  return Kind::unknown;
}

// Every YAML or JSON file under examples/, in name order.
std::vector<fs::path> example_files() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(kExamples)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> files_of(Kind kind) {
  std::vector<fs::path> out;
  for (const fs::path& p : example_files()) {
    if (kind_of(p) == kind) out.push_back(p);
  }
  return out;
}

TEST(Examples, EveryYamlFileUnderExamplesIsOneThatAParserReads) {
  for (const fs::path& p : example_files()) {
    EXPECT_NE(kind_of(p), Kind::unknown)
        << "examples/" << rel(p)
        << ": no parser reads it; put job specs under examples/jobs/, scenarios under "
           "examples/simulate/, and name a clusters file examples/clusters*.yaml";
  }
  EXPECT_GE(files_of(Kind::clusters).size(), 3u);
  EXPECT_GE(files_of(Kind::job).size(), 6u);
  EXPECT_GE(files_of(Kind::scenario).size(), 1u);
}

TEST(Examples, EveryClustersFileParses) {
  for (const fs::path& p : files_of(Kind::clusters)) {
    auto file = parse_clusters_file(read(p), "examples/" + rel(p));
    EXPECT_TRUE(file.ok()) << file.error().message;
  }
}

TEST(Examples, EveryJobSpecParses) {
  for (const fs::path& p : files_of(Kind::job)) {
    auto spec = parse_job_spec(read(p), "examples/" + rel(p));
    EXPECT_TRUE(spec.ok()) << spec.error().message;
  }
}

TEST(Examples, EveryScenarioParses) {
  for (const fs::path& p : files_of(Kind::scenario)) {
    const std::string text = read(p);
    if (sim::is_fleet_scenario(text)) {
      auto fleet = sim::parse_fleet_scenario(text, "examples/" + rel(p));
      EXPECT_TRUE(fleet.ok()) << fleet.error().message;
      continue;
    }
    auto scenario = sim::parse_scenario(text, "examples/" + rel(p));
    EXPECT_TRUE(scenario.ok()) << scenario.error().message;
  }
}

// Why the server would refuse the job at submit with this clusters file: a cluster of
// placement.allowed it does not have, a container none of them runs, slurm: options they refuse,
// an unknown priority class, a secret it does not define. Empty: it would be accepted.
std::vector<std::string> submit_refusals(const JobSpec& spec, const ClustersFile& file) {
  std::vector<std::string> out;
  for (const std::string& c : spec.allowed_clusters) {
    if (find_cluster(file.clusters, c) == nullptr) out.push_back("no cluster " + c);
  }
  if (!out.empty()) return out;
  if (auto r = check_container_clusters(spec, file.clusters); !r) out.push_back(r.error().message);
  if (auto r = check_slurm_option_clusters(spec, file.clusters); !r) {
    out.push_back(r.error().message);
  }
  std::string why;
  if (!spec.priority_class.empty() &&
      !resolve_priority(file.scheduling, spec.priority_class, why)) {
    out.push_back(why);
  }
  for (const auto& [var, secret] : spec.secret_env) {
    const bool defined = std::any_of(file.secrets.begin(), file.secrets.end(),
                                     [&](const ConfiguredSecret& s) { return s.name == secret; });
    if (!defined) out.push_back("secret_env " + var + ": no secret " + secret + " in secrets:");
  }
  return out;
}

// Each job names the example clusters it is for in placement.allowed, and one example clusters
// file would take it at submit (submit_refusals); its workdir, which `orchestrate job submit`
// packs from the job file's folder, exists.
TEST(Examples, EveryJobCouldBeSubmittedToAnExampleClustersFile) {
  std::map<std::string, ClustersFile> files;
  for (const fs::path& p : files_of(Kind::clusters)) {
    auto file = parse_clusters_file(read(p), rel(p));
    if (file.ok()) files.emplace(rel(p), std::move(*file));
  }
  for (const fs::path& p : files_of(Kind::job)) {
    auto spec = parse_job_spec(read(p), rel(p));
    if (!spec.ok()) continue;  // EveryJobSpecParses names it
    SCOPED_TRACE("examples/" + rel(p));
    if (!spec->workdir.source.empty()) {
      EXPECT_TRUE(fs::is_directory(p.parent_path() / spec->workdir.source))
          << "workdir " << spec->workdir.source << " is not a folder beside the job file";
    }
    EXPECT_FALSE(spec->allowed_clusters.empty())
        << "name the example clusters it runs on in placement.allowed";
    std::string refusals;
    bool accepted = false;
    for (const auto& [name, file] : files) {
      const std::vector<std::string> why = submit_refusals(*spec, file);
      accepted = accepted || why.empty();
      for (const std::string& w : why) refusals += "\n  " + name + ": " + w;
    }
    EXPECT_TRUE(accepted) << "no example clusters file would take it:" << refusals;
  }
}

// The cross-check can fail: the pyxis job against the files it is not for.
TEST(Examples, AJobAgainstAClustersFileItIsNotForIsRefusedWithWhy) {
  auto spec = parse_job_spec(read(kExamples / "jobs/pyxis-container.yaml"), "pyxis.yaml");
  auto local = parse_clusters_file(read(kExamples / "clusters.yaml"), "clusters.yaml");
  auto kube = parse_clusters_file(read(kExamples / "clusters-kubernetes.yaml"), "kube.yaml");
  ASSERT_TRUE(spec.ok() && local.ok() && kube.ok());
  EXPECT_THAT(submit_refusals(*spec, *local), ::testing::ElementsAre("no cluster east"));
  EXPECT_THAT(submit_refusals(*spec, *kube),
              ::testing::ElementsAre(::testing::HasSubstr("priority class \"hero\"")));
}

TEST(Examples, TheSweepStandsForOneJobPerPointOfItsGrid) {
  auto spec = parse_job_spec(read(kExamples / "jobs/sweep-lr.yaml"), "sweep-lr.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const std::vector<JobSpec> points = expand_sweep(*spec);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].name, "sweep-lr-1");
  EXPECT_EQ(points[0].group, "sweep-lr");
  EXPECT_EQ(points[0].env.at("LR"), "0.01");
  EXPECT_THAT(points[0].command, ::testing::EndsWith(" --batch 32"));
  EXPECT_EQ(points[3].env.at("LR"), "0.05");
  EXPECT_THAT(points[3].command, ::testing::EndsWith(" --batch 64"));
}

// examples/README.md lists every example: each YAML file and each Python program by its path
// under examples/. The client a user copies beside the programs (examples/python/orchestrate/)
// is not an example.
TEST(Examples, TheReadmeListsEveryExampleFile) {
  const std::string readme = read(kExamples / "README.md");
  std::vector<fs::path> files = example_files();
  for (const auto& entry : fs::recursive_directory_iterator(kExamples)) {
    const std::string r = rel(entry.path());
    if (entry.is_regular_file() && entry.path().extension() == ".py" &&
        r.find("orchestrate/") == std::string::npos && r.find("__pycache__") == std::string::npos) {
      files.push_back(entry.path());
    }
  }
  for (const fs::path& p : files) {
    EXPECT_NE(readme.find(rel(p)), std::string::npos)
        << "examples/README.md does not name " << rel(p);
  }
}

}  // namespace
}  // namespace orch
