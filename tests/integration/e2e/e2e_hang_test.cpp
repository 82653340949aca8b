// A job that stops printing progress, against the real server and a real local site: it is
// found hung within hang_after plus one poll, its attempt is stopped, and the job resumes from
// its newest checkpoint and finishes (issue 4's acceptance).
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "e2e_fixture.h"

namespace orch::e2e {
namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

TEST_F(E2eTest, AJobThatStopsPrintingProgressIsFoundHungAndResumedFromItsCheckpoint) {
  constexpr double kHangAfterS = 2.0;
  // The first attempt hangs after step 25 (ignoring SIGTERM, like a deadlocked collective); the
  // second one runs through.
  const std::int64_t id =
      submit(job_yaml("hangs",
                      "--steps 60 --step-delay-ms 10 --ckpt-every 10 --hang-at-step 25 "
                      "--fault-attempt 1",
                      restart_yaml(0) + "health: {hang_after_s: 2}\n"));
  ASSERT_GT(id, 0);
  json j = wait_step(id, 25);
  ASSERT_FALSE(j.is_null()) << describe_job(url_, id);
  const auto stalled = SteadyClock::now();  // step 25 was seen: nothing comes after it

  double detected_after_s = -1;
  for (int i = 0; i < 400; ++i) {
    json list = attempts(id);
    if (list.is_array() && !list.empty() && list[0]["state"] == "exited") {
      detected_after_s = seconds_since(stalled);
      EXPECT_EQ(list[0]["cause"], "hang") << list.dump();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_GE(detected_after_s, 0) << "the hung attempt was never ended: " << describe_job(url_, id);
  std::cout << "hung attempt ended " << detected_after_s
            << " s after its last progress line was seen (hang_after " << kHangAfterS << " s)\n";
  // Within hang_after plus one poll (50 ms) and the server's tick, with room for a busy machine;
  // and not before hang_after, counted from the last progress line the server saw.
  EXPECT_LE(detected_after_s, kHangAfterS + 1.0) << describe_job(url_, id);
  EXPECT_GE(detected_after_s, kHangAfterS - 0.3) << describe_job(url_, id);

  json done = wait_final(id);
  ASSERT_EQ(done["state"], "succeeded") << describe_job(url_, id);
  json list = attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["cause"], "hang");
  EXPECT_EQ(list[1]["resumed_from"]["step"], 20) << list.dump();
  EXPECT_EQ(list[1]["last_step"], 60);
  json job_now = job(id);
  EXPECT_EQ(job_now["infra_restarts"], 1) << job_now.dump();
  bool cancel_seen = false;
  for (const auto& e : events(id)) {
    if (e["kind"] == "cancel-requested" &&
        e["message"].get<std::string>().find("hung") != std::string::npos) {
      cancel_seen = true;
    }
  }
  EXPECT_TRUE(cancel_seen) << events(id).dump(1);
}

// A job that never speaks the progress protocol (a plain script, a trainer of its own) runs to
// its end however long it is silent: hang_after counts only after a first progress line
// (issue 14).
TEST_F(E2eTest, AJobThatPrintsNoProtocolLinesRunsToItsEnd) {
  const std::int64_t id =
      submit("name: quiet\ncommand: sleep 4; echo done\nresources: {nodes: 1, gpus_per_node: 1}\n" +
             restart_yaml(0) + "health: {hang_after_s: 1}\n");
  ASSERT_GT(id, 0);
  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 1u) << list.dump();
  EXPECT_EQ(list[0]["cause"], "succeeded") << list.dump();
}

}  // namespace
}  // namespace orch::e2e
