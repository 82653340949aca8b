// Issue 43 acceptance, I/O stalls, through the local site: a real Python trainer (the orchestrate
// client, Debian's python3) saves quickly three times, then one save stalls for 20x their median.
// Its agent, given the launch's bound, raises io_stall while the save still runs, and the site's
// observation carries it as an alert naming the path, the mount and the filesystem, within the
// bound (plus one poll); the checkpoint record that ends the save carries save_s.
#include <gmock/gmock.h>

#include <chrono>

#include "tests/unit/local/local_test_util.h"

namespace orch::testing {
namespace {

using ::testing::HasSubstr;

// Saves of 0.2 s at steps 1-3, then step 4's save sleeps 4 s inside atomic_path (the stall).
constexpr const char* kTrainer = R"(
import os, sys, time
sys.path.insert(0, os.environ["ORCH_PYTHON_DIR"])
import orchestrate
d = os.environ["ORCH_CHECKPOINT_DIR"]
os.makedirs(d, exist_ok=True)
for step in range(1, 5):
    orchestrate.progress(step)
    path = "%s/step-%d.pt" % (d, step)
    if step == 4:
        print("stalling", flush=True)
    with orchestrate.atomic_path(path, step=step) as tmp:
        with open(tmp, "w") as f:
            f.write("state %d" % step)
        time.sleep(4.0 if step == 4 else 0.2)
    orchestrate.checkpoint(step, path)
print("done", flush=True)
)";

class LocalIoStallTest : public LocalSiteTest {};

TEST_F(LocalIoStallTest, ASaveStalledForTwentyTimesItsMedianRaisesIoStallWithinTheBound) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  std::ofstream(root_ + "/trainer.py") << kTrainer;
  LaunchRequest r = request("io-stall", "/usr/bin/python3 " + root_ + "/trainer.py");
  r.env["ORCH_PYTHON_DIR"] = std::string(ORCH_SOURCE_DIR) + "/python";
  r.env["ORCH_CHECKPOINT_DIR"] = root_ + "/ckpt";
  r.checkpoint_dir = root_ + "/ckpt";
  // What the brain gives a job whose median save is 0.2 s with checkpoint.stall_factor 5 and
  // stall_min_s 1 (io_stall_after_s, brain_io_stall_test): 5 x 0.2 s, at least 1 s.
  r.io_stall_after_s = 1;
  r.heartbeat_s = 0.2;
  launch_ok(r);
  ASSERT_TRUE(wait_output("io-stall", "stalling"));
  const auto stalled_from = std::chrono::steady_clock::now();
  std::optional<TaskAlert> alert;
  ASSERT_TRUE(eventually([&] {
    auto obs = site_->observe("io-stall", 0);
    if (obs.ok() && !obs->alerts.empty()) alert = obs->alerts[0];
    return alert.has_value();
  }));
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stalled_from).count();
  EXPECT_LT(waited_s, 1.0 + 1.5) << "the bound is 1 s";
  EXPECT_EQ(alert->kind, "io_stall");
  EXPECT_EQ(alert->step, 4);
  EXPECT_EQ(alert->path, root_ + "/ckpt/step-4.pt");
  EXPECT_DOUBLE_EQ(alert->after_s, 1);
  EXPECT_GE(alert->running_s, 1);
  EXPECT_LT(alert->running_s, 4);  // raised while the save still ran
  EXPECT_FALSE(alert->fs.empty());
  EXPECT_FALSE(alert->mount.empty());
  EXPECT_EQ(alert->node, "loc-n0");
  EXPECT_THAT(alert->detail, HasSubstr("the save of step 4 to " + root_ + "/ckpt/step-4.pt"));

  std::vector<std::string> lines;
  RunObservation last = wait_exited("io-stall", &lines);
  ASSERT_EQ(last.phase, RunPhase::exited);
  EXPECT_EQ(last.exit->exit_code, 0);
  EXPECT_TRUE(last.alerts.empty());  // the save is over
  const std::string events = slurp(local::run_paths(root_, "io-stall").events);
  EXPECT_THAT(events, HasSubstr(R"("event":"io_stall","step":4)"));
  EXPECT_THAT(events, HasSubstr(R"("save_s":4)"));
}

}  // namespace
}  // namespace orch::testing
