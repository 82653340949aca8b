// The save watch (issue 43, I/O stalls) on a scripted timeline: a fake clock, a fake mount
// lookup, and mountinfo text.
#include "agents/save_watch.h"

#include <gmock/gmock.h>

namespace orch::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kWall = 1'700'000'000'000;

MountOf fake_mount(const std::string&) {
  return {"/ckpt", "nfs4"};
}

SaveWatch watch_with(std::int64_t stall_after_ms) {
  return SaveWatch({stall_after_ms, "alpha-n1", 3}, fake_mount);
}

// A save from `at` that takes `ms`, as run_command drives the watch.
void save(SaveWatch& w, std::int64_t step, std::int64_t at, std::int64_t ms) {
  w.on_start(step, "/ckpt/job-1/step-" + std::to_string(step) + ".pt", at, kWall + at);
  EXPECT_TRUE(w.on_tick(at + ms, kWall + at + ms).empty());
  w.on_checkpoint(at + ms);
}

TEST(SaveWatch, ACheckpointStartIsRecordedDurablyWithItsStepAndPath) {
  SaveWatch w = watch_with(0);
  auto r = w.on_start(7, "/ckpt/job-1/step-7.pt", 100, kWall);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].line,
            R"({"event":"checkpoint_start","step":7,"path":"/ckpt/job-1/step-7.pt","at_ms":)" +
                std::to_string(kWall) + "}");
  EXPECT_TRUE(r[0].durable);
}

TEST(SaveWatch, WithoutALaunchBoundAndBeforeThreeSavesNothingIsWatched) {
  SaveWatch w = watch_with(0);
  save(w, 1, 0, 10'000);
  save(w, 2, 20'000, 10'000);
  EXPECT_FALSE(w.bound_ms().has_value());
  w.on_start(3, "/ckpt/job-1/step-3.pt", 40'000, kWall);
  EXPECT_EQ(w.next_due_in(40'000), -1);
  EXPECT_TRUE(w.on_tick(40'000 + 3'600'000, kWall).empty());
}

TEST(SaveWatch, ASaveStalledForTenTimesItsMedianRaisesIoStallAtTheBound) {
  SaveWatch w = watch_with(0);
  save(w, 1, 0, 20'000);
  save(w, 2, 100'000, 24'000);
  save(w, 3, 200'000, 22'000);
  ASSERT_EQ(w.bound_ms(), static_cast<std::int64_t>(kStallFactor * 22'000));  // 5 x the median
  w.on_start(4, "/ckpt/job-1/step-4.pt", 300'000, kWall + 300'000);
  EXPECT_EQ(w.next_due_in(300'000), 110'000);
  EXPECT_TRUE(w.on_tick(300'000 + 109'999, kWall).empty());
  auto r = w.on_tick(300'000 + 110'000, kWall + 410'000);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].durable);
  EXPECT_EQ(r[0].line,
            R"({"event":"io_stall","step":4,"path":"/ckpt/job-1/step-4.pt","mount":"/ckpt",)"
            R"("fs":"nfs4","running_s":110,"after_s":110,"node":"alpha-n1","task_rank":3,)"
            R"("at_ms":)" +
                std::to_string(kWall + 410'000) + "}");
  EXPECT_THAT(r[0].warning, HasSubstr("io_stall after 110 s"));
  // Once per save: ten times its median (220 s) it has not been raised again.
  EXPECT_TRUE(w.on_tick(300'000 + 220'000, kWall).empty());
  EXPECT_EQ(w.next_due_in(300'000 + 220'000), -1);
}

TEST(SaveWatch, TheAttemptsOwnBoundIsNeverBelowAMinute) {
  SaveWatch w = watch_with(0);
  for (int i = 0; i < 3; ++i) save(w, i, i * 10'000, 500);
  EXPECT_EQ(w.bound_ms(), kStallMinMs);
}

TEST(SaveWatch, TheLaunchBoundHoldsFromTheFirstSaveAndTheSmallerBoundWins) {
  SaveWatch w = watch_with(30'000);
  EXPECT_EQ(w.bound_ms(), 30'000);
  for (int i = 0; i < 3; ++i) save(w, i, i * 100'000, 20'000);
  EXPECT_EQ(w.bound_ms(), 30'000);  // 5 x 20 s = 100 s is the larger
  SaveWatch tight = watch_with(600'000);
  for (int i = 0; i < 3; ++i) save(tight, i, i * 100'000, 20'000);
  EXPECT_EQ(tight.bound_ms(), 100'000);
}

TEST(SaveWatch, HeartbeatsRepeatTheStallWhileTheSaveLastsAndTheCheckpointCarriesSaveS) {
  SaveWatch w = watch_with(30'000);
  w.on_start(9, "/ckpt/job-1/step-9.pt", 0, kWall);
  std::vector<EventRecord> early{{R"({"event":"heartbeat","at_ms":1})", false, ""}};
  w.decorate(&early, 10'000);
  EXPECT_THAT(early[0].line, Not(HasSubstr("stall")));  // not stalled yet
  ASSERT_EQ(w.on_tick(30'000, kWall + 30'000).size(), 1u);
  std::vector<EventRecord> beats{
      {R"({"event":"heartbeat","at_ms":1,"node":"alpha-n1"})", false, ""},
      {R"({"event":"progress","step":8,"at_ms":1})", false, ""}};
  w.decorate(&beats, 40'000);
  EXPECT_EQ(beats[0].line,
            R"({"event":"heartbeat","at_ms":1,"node":"alpha-n1","stall":{"step":9,)"
            R"("path":"/ckpt/job-1/step-9.pt","mount":"/ckpt","fs":"nfs4","running_s":40,)"
            R"("after_s":30,"node":"alpha-n1","task_rank":3}})");
  EXPECT_EQ(beats[1].line, R"({"event":"progress","step":8,"at_ms":1})");
  std::vector<EventRecord> done{
      {R"({"event":"checkpoint","step":9,"path":"/ckpt/job-1/step-9.pt","at_ms":2})", true, ""}};
  w.decorate(&done, 45'250);
  w.on_checkpoint(45'250);
  EXPECT_EQ(done[0].line,
            R"({"event":"checkpoint","step":9,"path":"/ckpt/job-1/step-9.pt","at_ms":2,)"
            R"("save_s":45.25})");
  std::vector<EventRecord> after{{R"({"event":"heartbeat","at_ms":3})", false, ""}};
  w.decorate(&after, 50'000);
  EXPECT_EQ(after[0].line, R"({"event":"heartbeat","at_ms":3})");  // the save is over
}

TEST(SaveWatch, ACheckpointWithoutAStartIsLeftAsItIs) {
  SaveWatch w = watch_with(30'000);
  std::vector<EventRecord> done{
      {R"({"event":"checkpoint","step":1,"path":"/c","at_ms":2})", true, ""}};
  w.decorate(&done, 5'000);
  w.on_checkpoint(5'000);
  EXPECT_EQ(done[0].line, R"({"event":"checkpoint","step":1,"path":"/c","at_ms":2})");
  EXPECT_EQ(w.bound_ms(), 30'000);  // nothing was measured
}

constexpr const char* kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "40 22 0:35 / /ckpt rw,relatime shared:20 - nfs4 fs1:/export rw,vers=4.2\n"
    "41 40 0:36 / /ckpt/fast rw shared:21 - lustre 10.0.0.1@o2ib:/scratch rw\n"
    "42 22 0:37 / /mnt/my\\040disk rw - xfs /dev/sdb1 rw\n"
    "43 22 0:38 / /ckpt2 rw - tmpfs tmpfs rw\n"
    "garbage line\n";

TEST(MountOfPath, TheLongestMountPointThatHoldsThePathNamesMountAndType) {
  EXPECT_EQ(mount_of_path(kMountinfo, "/ckpt/job-1/step-4.pt").mount, "/ckpt");
  EXPECT_EQ(mount_of_path(kMountinfo, "/ckpt/job-1/step-4.pt").fs, "nfs4");
  EXPECT_EQ(mount_of_path(kMountinfo, "/ckpt/fast/a").fs, "lustre");
  EXPECT_EQ(mount_of_path(kMountinfo, "/ckpt2/x").fs, "tmpfs");  // not /ckpt's
  EXPECT_EQ(mount_of_path(kMountinfo, "/home/u/x").mount, "/");
  EXPECT_EQ(mount_of_path(kMountinfo, "/home/u/x").fs, "ext4");
  EXPECT_EQ(mount_of_path(kMountinfo, "/mnt/my disk/c").mount, "/mnt/my disk");
}

TEST(MountOfPath, ThePathIsNormalisedWithoutTouchingTheFilesystem) {
  EXPECT_EQ(mount_of_path(kMountinfo, "/ckpt/./fast//../job/x").fs, "nfs4");
  EXPECT_EQ(mount_of_path(kMountinfo, "/tmp/../ckpt/fast/y").fs, "lustre");
}

TEST(MountOfPath, ALaterMountOverTheSamePointWins) {
  const std::string text = std::string(kMountinfo) + "50 40 0:40 / /ckpt rw - fuse.s3fs s3 rw\n";
  EXPECT_EQ(mount_of_path(text, "/ckpt/job-1/x").fs, "fuse.s3fs");
}

TEST(MountOfPath, NoMountinfoNamesNothing) {
  EXPECT_EQ(mount_of_path("", "/ckpt/x").mount, "");
  EXPECT_EQ(mount_of_path("", "/ckpt/x").fs, "");
}

TEST(MountOfPath, ThisProcessFindsTheRootFilesystem) {
  EXPECT_FALSE(mount_of_path("/").fs.empty());
}

}  // namespace
}  // namespace orch::agent
