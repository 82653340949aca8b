// The simulated fleet (issue 19) through the ClusterPort the site workers use: attempts train and
// print the progress protocol, a failed node ends the attempt that holds it and is named,
// excluded nodes are never granted, a resume starts at the checkpoint's step, outages silence
// the site and kill its attempts, and the same seed gives the same world.
#include <gmock/gmock.h>

#include <memory>
#include <mutex>

#include "adapters/sim/sim_site.h"
#include "scheduler/model/progress_line.h"
#include "simulator/world/sim_world.h"
#include "tests/unit/sim/sim_job_builder.h"

namespace orch::sim {
namespace {

constexpr double kHour = 3600;

SimCluster cluster(const std::string& name, int nodes, double node_mtbf_h) {
  SimCluster c;
  c.name = name;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.mfu = 0.4;
  c.law = {FailureLaw::Kind::exponential, node_mtbf_h * kHour, 1};
  c.restart_s = 600;
  c.repair_s = 2 * kHour;
  c.progress_every_s = 600;
  return c;
}

SimJob job(double mtbf_s = 0) {
  return llm_job(mtbf_s);
}

LaunchRequest request(const std::string& token, int nodes = 2) {
  LaunchRequest r;
  r.token = token;
  r.job_name = "llm";
  r.nodes = nodes;
  r.gpus_per_node = 8;
  return r;
}

struct World {
  explicit World(std::vector<SimCluster> clusters, std::uint64_t seed = 7, SimJob j = job()) {
    auto w = SimWorld::make(seed, std::move(clusters), {std::move(j)},
                            CauseMix::make(llama3_cause_mix()).value());
    EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
    world = std::move(*w);
    for (std::size_t i = 0; i < world->cluster_count(); ++i) {
      sites.push_back(std::make_unique<SimSite>(*world, lock, i, 0));
    }
  }
  std::unique_ptr<SimWorld> world;
  std::mutex lock;
  std::vector<std::unique_ptr<SimSite>> sites;
};

std::vector<ProgressLine> parsed(const std::vector<std::string>& lines) {
  std::vector<ProgressLine> out;
  for (const auto& l : lines) {
    auto p = parse_progress_line(l);
    EXPECT_TRUE(p && p->ok()) << l;
    if (p && p->ok()) out.push_back(p->value());
  }
  return out;
}

TEST(SimWorld, AnAttemptLoadsForItsRestartTimeThenTrainsAndPrintsTheProtocol) {
  World w({cluster("a", 4, 1e9)});
  SimSite& site = *w.sites[0];
  auto launched = site.launch(request("t1"));
  ASSERT_TRUE(launched.ok());
  EXPECT_EQ(launched->nodes, (std::vector<std::string>{"a-n0000", "a-n0001"}));
  EXPECT_EQ(site.observe("t1", 0)->phase, RunPhase::running);
  EXPECT_TRUE(site.observe("t1", 0)->new_lines.empty());  // loading for restart_s (600 s)
  // Training from 600 s: step 600 at 1,200 s, its save until 1,230 s, step 1,200 at 1,830 s
  // and its save until 1,860 s. At 1,850 s: one save, and progress lines at 1,200 and 1,800 s.
  w.world->advance_to(1850);
  auto obs = site.observe("t1", 0);
  ASSERT_TRUE(obs.ok());
  const auto lines = parsed(obs->new_lines);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(std::get<ProgressReport>(lines[0]).step, 600);  // 600 s of training: step 600
  EXPECT_EQ(std::get<CheckpointReport>(lines[1]).step, 600);
  EXPECT_EQ(std::get<CheckpointReport>(lines[1]).path, "/sim/ckpt/llm/step-600");
  EXPECT_EQ(std::get<ProgressReport>(lines[2]).step, 1170);  // 1,200 s, 30 of them saving
  EXPECT_DOUBLE_EQ(*std::get<ProgressReport>(lines[2]).step_time_s, 1.0);
  // The next read starts where this one stopped.
  EXPECT_TRUE(site.observe("t1", obs->next_offset)->new_lines.empty());
  // The checkpoint is on the site's storage, listed with a hash.
  ManifestRequest m;
  m.path = "/sim/ckpt/llm/step-600";
  auto manifest = site.manifest(m);
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ(manifest->files.at(0).sha256.size(), 64u);
  m.path = "/sim/ckpt/llm/step-1200";
  EXPECT_EQ(site.manifest(m).error().kind, ErrorKind::not_found);
}

// Tiered saves (issue 38): the blocking part goes to the first node's own directory (the line
// says so), the drain to shared storage follows drain_s later; a run that ends first never
// reports the drain, and only drained copies count as the site's.
TEST(SimWorld, ATieredSaveIsOnTheNodeFirstAndSharedOnceDrained) {
  SimJob tiered = job();
  tiered.save_s = 2;
  tiered.drain_s = 200;
  World w({cluster("a", 4, 1e9)}, 7, tiered);
  SimSite& site = *w.sites[0];
  LaunchRequest r = request("t1");
  r.env["ORCH_LOCAL_CHECKPOINT_DIR"] = "/sim/local/{node}/job-1";
  ASSERT_TRUE(site.launch(r).ok());
  w.world->advance_to(1300);  // step 600 at 1,200 s, saved on the node at 1,202 s
  auto first = site.observe("t1", 0).value();
  auto lines = parsed(first.new_lines);
  ASSERT_EQ(lines.size(), 2u);
  const auto& local = std::get<CheckpointReport>(lines[1]);
  EXPECT_EQ(local.tier, CheckpointTier::local);
  EXPECT_EQ(local.node, "a-n0000");
  EXPECT_EQ(local.path, "/sim/local/a-n0000/job-1/step-600");
  EXPECT_FALSE(w.world->newest_checkpoint(0, "llm").has_value()) << "not drained yet";
  w.world->advance_to(1500);  // drained at 1,402 s
  lines = parsed(site.observe("t1", first.next_offset)->new_lines);
  ASSERT_EQ(lines.size(), 1u);
  const auto& shared = std::get<CheckpointReport>(lines[0]);
  EXPECT_EQ(shared.tier, CheckpointTier::shared);
  EXPECT_EQ(shared.step, 600);
  EXPECT_EQ(shared.path, "/sim/ckpt/llm/step-600");
  EXPECT_EQ(w.world->newest_checkpoint(0, "llm"), "/sim/ckpt/llm/step-600");
  // The next save (step 1,200 at 1,802 s) never drains: the run ends at 1,900 s.
  w.world->advance_to(1900);
  ASSERT_TRUE(site.cancel("t1").ok());
  w.world->advance_to(2100);
  EXPECT_EQ(w.world->newest_checkpoint(0, "llm"), "/sim/ckpt/llm/step-600");
}

// Hot spares (issue 38): a relaunch after a failure that finds a held spare trains again
// spare_restart_s after its grant instead of restart_s; without spares it waits restart_s.
TEST(SimWorld, AHeldSpareMakesTheRelaunchAfterAFailureFast) {
  for (int spares : {0, 1}) {
    SimCluster c = cluster("a", 6, 10);
    c.spares = spares;
    c.spare_restart_s = 30;
    World w({c});
    SimSite& site = *w.sites[0];
    ASSERT_TRUE(site.launch(request("t1")).ok());
    double t = 0;
    while (site.observe("t1", 0)->phase != RunPhase::exited && t < 200 * kHour) {
      w.world->advance_to(t += 60);
    }
    ASSERT_EQ(site.observe("t1", 0)->phase, RunPhase::exited);
    ASSERT_TRUE(site.launch(request("t2")).ok());
    const double granted = w.world->now();
    w.world->advance_to(granted + 700);
    const JobTruth truth = w.world->truth("llm");
    ASSERT_TRUE(truth.interruptions.at(0).resumed_s.has_value());
    EXPECT_DOUBLE_EQ(*truth.interruptions[0].resumed_s - granted, spares > 0 ? 30 : 600)
        << spares << " spares";
  }
}

TEST(SimWorld, LaunchIsIdempotentPerToken) {
  World w({cluster("a", 4, 1e9)});
  ASSERT_TRUE(w.sites[0]->launch(request("t1")).ok());
  auto again = w.sites[0]->launch(request("t1"));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->adopted);
  EXPECT_EQ(w.world->truth("llm").runs, 1);
}

TEST(SimWorld, AFailedNodeEndsTheAttemptThatHoldsItAndIsNamed) {
  // Nodes fail every 10 h on average: within 100 h one of the two the job holds fails.
  World w({cluster("a", 2, 10)});
  SimSite& site = *w.sites[0];
  ASSERT_TRUE(site.launch(request("t1")).ok());
  double t = 0;
  RunObservation obs;
  while (t < 100 * kHour) {
    t += 60;
    w.world->advance_to(t);
    obs = site.observe("t1", 0).value();
    if (obs.phase == RunPhase::exited) break;
  }
  ASSERT_EQ(obs.phase, RunPhase::exited);
  ASSERT_TRUE(obs.exit.has_value());
  EXPECT_TRUE(obs.exit->node_lost);
  EXPECT_THAT(obs.exit->failed_node, ::testing::StartsWith("a-n000"));
  EXPECT_THAT(obs.exit->detail, ::testing::HasSubstr("failed ("));
  const JobTruth truth = w.world->truth("llm");
  ASSERT_EQ(truth.interruptions.size(), 1u);
  EXPECT_TRUE(truth.interruptions[0].seen_s.has_value());
  EXPECT_LE(*truth.interruptions[0].seen_s - truth.interruptions[0].at_s, 60);
  // The failed node is down for repair: the inventory says so.
  bool down = false;
  for (const NodeInfo& n : site.inventory()->nodes) down = down || !n.healthy;
  EXPECT_TRUE(down);
}

TEST(SimWorld, ExcludedNodesAreNeverGrantedAndAJobWaitsForEnoughNodes) {
  World w({cluster("a", 3, 1e9)});
  LaunchRequest r = request("t1");
  r.exclude_nodes = {"a-n0000"};
  auto launched = w.sites[0]->launch(r);
  ASSERT_TRUE(launched.ok());
  EXPECT_EQ(launched->nodes, (std::vector<std::string>{"a-n0001", "a-n0002"}));
  // Nothing is left for a second one: it queues until the first ends.
  ASSERT_TRUE(w.sites[0]->launch(request("t2")).ok());
  EXPECT_EQ(w.sites[0]->observe("t2", 0)->phase, RunPhase::queued);
  ASSERT_TRUE(w.sites[0]->cancel("t1").ok());
  EXPECT_EQ(w.sites[0]->observe("t2", 0)->phase, RunPhase::running);
}

TEST(SimWorld, AResumeStartsAtTheCheckpointsStepAndTheStepsAfterItAreLost) {
  World w({cluster("a", 4, 1e9)});
  ASSERT_TRUE(w.sites[0]->launch(request("t1")).ok());
  w.world->advance_to(600 + 900);  // 870 steps made (one save of 30 s after step 600)
  ASSERT_TRUE(w.sites[0]->cancel("t1").ok());
  EXPECT_EQ(w.world->truth("llm").kept_steps(), 870);
  LaunchRequest r = request("t2");
  r.env[r.resume_env] = "/sim/ckpt/llm/step-600";
  ASSERT_TRUE(w.sites[0]->launch(r).ok());
  w.world->advance_to(1500 + 600 + 100);
  const JobTruth truth = w.world->truth("llm");
  EXPECT_EQ(truth.steps_lost, 270);
  EXPECT_EQ(truth.kept_steps(), 700);  // 600 from the checkpoint, then 100 more
  // A checkpoint the site does not hold cannot be resumed from.
  LaunchRequest bad = request("t3");
  bad.env[bad.resume_env] = "/sim/ckpt/llm/step-9000";
  EXPECT_EQ(w.sites[0]->launch(bad).error().kind, ErrorKind::not_found);
}

TEST(SimWorld, AnOutageSilencesTheSiteAndEndsItsAttempts) {
  SimCluster c = cluster("a", 4, 1e9);
  c.outage_mtbf_s = 10 * kHour;
  c.outage_s = kHour;
  World w({c});
  SimSite& site = *w.sites[0];
  ASSERT_TRUE(site.launch(request("t1")).ok());
  double t = 0;
  while (site.inventory().ok() && t < 200 * kHour) w.world->advance_to(t += 60);
  ASSERT_FALSE(site.inventory().ok());
  EXPECT_EQ(site.observe("t1", 0).error().kind, ErrorKind::unreachable);
  w.world->advance_to(t + kHour);
  auto obs = site.observe("t1", 0);
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(obs->phase, RunPhase::exited);
  EXPECT_EQ(obs->exit->cause, ExitCause::site_down);
  EXPECT_EQ(w.world->truth("llm").interruptions.at(0).cause, "cluster outage");
}

TEST(SimWorld, ASlowNodeSlowsItsWholeGang) {
  SimCluster c = cluster("a", 2, 1e9);
  c.slow_fraction = 0.5;
  c.slow_speed = 0.5;
  World w({c});
  ASSERT_TRUE(w.sites[0]->launch(request("t1")).ok());
  w.world->advance_to(600 + 600);
  const auto lines = parsed(w.sites[0]->observe("t1", 0)->new_lines);
  ASSERT_FALSE(lines.empty());
  EXPECT_DOUBLE_EQ(*std::get<ProgressReport>(lines[0]).step_time_s, 2.0);
  EXPECT_EQ(std::get<ProgressReport>(lines[0]).step, 300);
}

TEST(SimWorld, TheSameSeedGivesTheSameWorld) {
  auto run = [](std::uint64_t seed) {
    World w({cluster("a", 8, 20), cluster("b", 8, 20)}, seed);
    std::vector<std::string> seen;
    EXPECT_TRUE(w.sites[0]->launch(request("t1", 4)).ok());
    for (double t = 0; t < 300 * kHour; t += 600) {
      w.world->advance_to(t);
      auto obs = w.sites[0]->observe("t1", 0);
      if (obs && obs->phase == RunPhase::exited) {
        seen.push_back(std::to_string(t) + " " + obs->exit->failed_node);
        break;
      }
    }
    for (const auto& [cause, n] : w.world->failures(1)) seen.push_back(cause + std::to_string(n));
    return seen;
  };
  EXPECT_EQ(run(3), run(3));
  EXPECT_NE(run(3), run(4));
}

TEST(SimWorld, RefusesWhatItCannotSimulate) {
  SimCluster bad = cluster("a", 4, 100);
  bad.mfu = 1.5;
  auto w = SimWorld::make(1, {bad}, {job()}, CauseMix::make(llama3_cause_mix()).value());
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.error().message, ::testing::HasSubstr("cluster a: mfu must be above 0"));
  auto twice = SimWorld::make(1, {cluster("a", 4, 100), cluster("a", 4, 100)}, {job()},
                              CauseMix::make(llama3_cause_mix()).value());
  EXPECT_THAT(twice.error().message, ::testing::HasSubstr("listed twice"));
  World ok({cluster("a", 4, 1e9)});
  LaunchRequest unknown = request("t1");
  unknown.job_name = "other";
  EXPECT_THAT(ok.sites[0]->launch(unknown).error().message, ::testing::HasSubstr("no job named"));
  EXPECT_EQ(ok.sites[0]->launch(request("t2", 9)).error().kind, ErrorKind::invalid);
}

}  // namespace
}  // namespace orch::sim
