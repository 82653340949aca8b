// Every job and attempt transition, legal and illegal, checked against one explicit table.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "scheduler/model/job_state.h"

namespace orch {
namespace {

using J = JobState;
using A = AttemptState;

const std::set<std::pair<J, J>> kLegalJob = {
    {J::pending, J::placed},
    {J::pending, J::cancelled},
    {J::pending, J::failed},
    {J::placed, J::running},
    {J::placed, J::resuming},
    {J::placed, J::succeeded},
    {J::placed, J::failed},
    {J::placed, J::cancelled},
    {J::placed, J::pending},  // the launch met the server's own misconfiguration
    {J::running, J::resuming},
    {J::running, J::succeeded},
    {J::running, J::failed},
    {J::running, J::cancelled},
    {J::resuming, J::placed},
    {J::resuming, J::failed},
    {J::resuming, J::cancelled},
    // Waiting for data to be copied before the launch (issue 5).
    {J::pending, J::staging},
    {J::resuming, J::staging},
    {J::staging, J::placed},
    {J::staging, J::pending},
    {J::staging, J::failed},
    {J::staging, J::cancelled},
};

TEST(JobStateMachine, ExactlyTheListedTransitionsAreLegal) {
  int legal = 0;
  for (J from : kAllJobStates) {
    for (J to : kAllJobStates) {
      bool expected = kLegalJob.count({from, to}) > 0;
      EXPECT_EQ(can_transition(from, to), expected) << to_string(from) << " -> " << to_string(to);
      legal += expected;
    }
  }
  EXPECT_EQ(legal, 22);
}

TEST(JobStateMachine, TerminalStatesHaveNoWayOut) {
  for (J from : {J::succeeded, J::failed, J::cancelled}) {
    EXPECT_TRUE(is_terminal(from));
    for (J to : kAllJobStates) EXPECT_FALSE(can_transition(from, to)) << to_string(to);
  }
  for (J s : {J::pending, J::placed, J::running, J::resuming}) EXPECT_FALSE(is_terminal(s));
}

TEST(AttemptStateMachine, LaunchingRunningExitedOnlyForward) {
  EXPECT_TRUE(can_transition(A::launching, A::running));
  EXPECT_TRUE(can_transition(A::launching, A::exited));
  EXPECT_TRUE(can_transition(A::running, A::exited));
  EXPECT_FALSE(can_transition(A::running, A::launching));
  EXPECT_FALSE(can_transition(A::exited, A::running));
  EXPECT_FALSE(can_transition(A::exited, A::launching));
  for (A s : kAllAttemptStates) EXPECT_FALSE(can_transition(s, s)) << to_string(s);
}

TEST(AttemptStateMachine, OnlyASiteDownEndCanBeReinstated) {
  EXPECT_TRUE(can_reinstate(A::exited, ExitCause::site_down, A::running));
  EXPECT_TRUE(can_reinstate(A::exited, ExitCause::site_down, A::launching));
  EXPECT_FALSE(can_reinstate(A::exited, ExitCause::site_down, A::exited));
  for (int i = 0; i <= static_cast<int>(ExitCause::cancelled); ++i) {
    auto c = static_cast<ExitCause>(i);
    if (c == ExitCause::site_down) continue;
    EXPECT_FALSE(can_reinstate(A::exited, c, A::running)) << to_string(c);
  }
  for (A from : {A::launching, A::running}) {
    EXPECT_FALSE(can_reinstate(from, ExitCause::site_down, A::running)) << to_string(from);
  }
}

TEST(StateNames, RoundTrip) {
  for (J s : kAllJobStates) EXPECT_EQ(parse_job_state(to_string(s)), s);
  for (A s : kAllAttemptStates) EXPECT_EQ(parse_attempt_state(to_string(s)), s);
  for (int i = 0; i <= static_cast<int>(ExitCause::cancelled); ++i) {
    auto c = static_cast<ExitCause>(i);
    EXPECT_EQ(parse_exit_cause(to_string(c)), c);
  }
  EXPECT_FALSE(parse_job_state("runing").has_value());
}

TEST(ExitCauses, InfraCausesAreTheMachinesFault) {
  for (ExitCause c :
       {ExitCause::killed_by_signal, ExitCause::site_down, ExitCause::node_lost,
        ExitCause::launch_failed, ExitCause::lost, ExitCause::preempted, ExitCause::time_limit}) {
    EXPECT_TRUE(is_infra_cause(c)) << to_string(c);
  }
  for (ExitCause c : {ExitCause::succeeded, ExitCause::user_error, ExitCause::cancelled,
                      ExitCause::none, ExitCause::out_of_memory}) {
    EXPECT_FALSE(is_infra_cause(c)) << to_string(c);
  }
}

}  // namespace
}  // namespace orch
