// Pods and Jobs -> the attempt's RunPhase and ExitStatus, every mapping of kube_status.h on
// pods in the shapes the API server returns (fixtures/pod-*.json, pods-*.json, job-*.json).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_status.h"
#include "tests/unit/kube/fixture.h"

namespace orch::kube {
namespace {

using testing::fixture;
using ::testing::HasSubstr;

std::vector<PodInfo> pods(const std::string& name) {
  auto parsed = parse_pods(fixture(name));
  EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.error().message;
  return parsed.ok() ? *parsed : std::vector<PodInfo>{};
}

std::optional<KubeJobInfo> job(const std::string& name) {
  auto parsed = parse_job(fixture(name));
  EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.error().message;
  return parsed.ok() ? std::optional<KubeJobInfo>(*parsed) : std::nullopt;
}

std::vector<KubeNode> cluster_nodes() {
  auto parsed = parse_node_list(fixture("nodes.json"));
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  return parsed.ok() ? *parsed : std::vector<KubeNode>{};
}

AttemptView view_of(const std::string& pods_fixture,
                    const std::optional<KubeJobInfo>& j = std::nullopt,
                    const std::vector<KubeNode>* nodes = nullptr) {
  return map_attempt(pods(pods_fixture), j, nodes);
}

// An exited view with this stated cause (nullopt: none stated) and detail words.
void expect_exit(const AttemptView& v, std::optional<ExitCause> cause, const std::string& words) {
  ASSERT_EQ(v.phase, RunPhase::exited);
  ASSERT_TRUE(v.exit.has_value());
  EXPECT_EQ(v.exit->cause, cause) << v.exit->detail;
  EXPECT_EQ(v.exit->node_lost, cause == ExitCause::node_lost);
  EXPECT_THAT(v.exit->detail, HasSubstr(words));
}

TEST(kube_parse_pods, ParsesThePodFields) {
  auto list = pods("pod-oomkilled.json");
  ASSERT_EQ(list.size(), 1U);
  const PodInfo& p = list[0];
  EXPECT_EQ(p.name, "orch-12-3-mx325f71-q7w2x");
  EXPECT_EQ(p.namespace_, "ml");
  EXPECT_EQ(p.node_name, "gpu-a1");
  EXPECT_EQ(p.phase, "Failed");
  EXPECT_EQ(p.token, "orch-12-3-mx325f71");
  EXPECT_FALSE(p.completion_index.has_value());
  EXPECT_FALSE(p.deleting);
  ASSERT_TRUE(p.container.has_value());
  EXPECT_EQ(p.container->name, "job");
  EXPECT_EQ(p.container->state, "terminated");
  EXPECT_EQ(p.container->reason, "OOMKilled");
  EXPECT_EQ(p.container->exit_code, 137);
  EXPECT_FALSE(p.container->signal.has_value());
  EXPECT_EQ(p.resource_version, "918400");

  auto indexed = pods("pods-indexed-one-failed-one-running.json");
  ASSERT_EQ(indexed.size(), 2U);
  EXPECT_EQ(indexed[0].completion_index, 0);
  EXPECT_EQ(indexed[1].completion_index, 1);
  EXPECT_TRUE(indexed[1].deleting);

  auto waiting = pods("pod-imagepullbackoff.json");
  ASSERT_EQ(waiting.size(), 1U);
  EXPECT_EQ(waiting[0].container->state, "waiting");
  EXPECT_EQ(waiting[0].container->reason, "ImagePullBackOff");
  EXPECT_FALSE(waiting[0].container->exit_code.has_value());

  auto pending = pods("pod-pending-unschedulable.json");
  ASSERT_EQ(pending.size(), 1U);
  EXPECT_EQ(pending[0].node_name, "");
  EXPECT_FALSE(pending[0].container.has_value());
}

TEST(kube_parse_attempt, PendingUnschedulableIsQueuedWithoutCapacity) {
  AttemptView v = view_of("pod-pending-unschedulable.json");
  EXPECT_EQ(v.phase, RunPhase::queued);
  EXPECT_TRUE(v.unschedulable);
  EXPECT_THAT(v.note, HasSubstr("Unschedulable: 0/6 nodes are available"));
  EXPECT_THAT(v.note, HasSubstr("2 Insufficient nvidia.com/gpu"));
  EXPECT_FALSE(v.exit.has_value());
  EXPECT_TRUE(v.nodes.empty());
}

TEST(kube_parse_attempt, PendingScheduledIsQueued) {
  AttemptView v = view_of("pod-pending-creating.json");
  EXPECT_EQ(v.phase, RunPhase::queued);
  EXPECT_FALSE(v.unschedulable);
  EXPECT_EQ(v.note, "ContainerCreating");
  EXPECT_EQ(v.nodes, std::vector<std::string>{"gpu-a1"});
}

TEST(kube_parse_attempt, Running) {
  AttemptView v = view_of("pod-running.json");
  EXPECT_EQ(v.phase, RunPhase::running);
  EXPECT_EQ(v.nodes, std::vector<std::string>{"gpu-a1"});
  EXPECT_FALSE(v.exit.has_value());
  EXPECT_FALSE(v.pods_left);
}

TEST(kube_parse_attempt, SucceededIsExitCodeZero) {
  AttemptView v = view_of("pod-succeeded.json");
  expect_exit(v, std::nullopt, "Completed (pod orch-12-3-mx325f71-q7w2x on gpu-a1)");
  EXPECT_EQ(v.exit->exit_code, 0);
  EXPECT_FALSE(v.exit->signal.has_value());
}

TEST(kube_parse_attempt, FailedCarriesTheExitCode) {
  AttemptView v = view_of("pod-failed-exit3.json");
  expect_exit(v, std::nullopt, "Error, exit code 3 (pod orch-12-3-mx325f71-q7w2x on gpu-a1)");
  EXPECT_EQ(v.exit->exit_code, 3);
  // 128+N stays a code: a segfaulting trainer is the job's fault (classify_exit: user_error).
  AttemptView segv = view_of("pod-failed-sigsegv.json");
  expect_exit(segv, std::nullopt, "exit code 139");
  EXPECT_EQ(segv.exit->exit_code, 139);
  EXPECT_FALSE(segv.exit->signal.has_value());
  // A runtime that reports the signal itself.
  AttemptView sig = view_of("pod-signal.json");
  expect_exit(sig, std::nullopt, "Error");
  EXPECT_EQ(sig.exit->signal, 9);
}

TEST(kube_parse_attempt, OomKilledIsOutOfMemory) {
  AttemptView v = view_of("pod-oomkilled.json");
  expect_exit(v, ExitCause::out_of_memory, "OOMKilled (pod orch-12-3-mx325f71-q7w2x on gpu-a1)");
  EXPECT_EQ(v.exit->exit_code, 137);
}

TEST(kube_parse_attempt, ImageAndConfigErrorsAreUserErrorsWithTheMessage) {
  AttemptView backoff = view_of("pod-imagepullbackoff.json");
  expect_exit(backoff, ExitCause::user_error,
              "ImagePullBackOff: Back-off pulling image \"nvcr.io/nvidia/pytorch:24.13-py3\"");
  EXPECT_TRUE(backoff.pods_left);  // the kubelet keeps pulling: delete the Job
  EXPECT_FALSE(backoff.exit->exit_code.has_value());

  AttemptView pull = view_of("pod-errimagepull.json");
  expect_exit(pull, ExitCause::user_error, "ErrImagePull: rpc error: code = NotFound");
  EXPECT_TRUE(pull.pods_left);

  AttemptView config = view_of("pod-createcontainerconfigerror.json");
  expect_exit(config, ExitCause::user_error,
              "CreateContainerConfigError: secret \"hf-token\" not found");
  EXPECT_TRUE(config.pods_left);
}

TEST(kube_parse_attempt, EvictionIsTheNodes) {
  AttemptView v = view_of("pod-evicted.json");
  expect_exit(v, ExitCause::node_lost, "Evicted: The node was low on resource: memory.");
  EXPECT_THAT(v.exit->detail, HasSubstr("TerminationByKubelet"));
  EXPECT_EQ(v.exit->exit_code, 137);
  EXPECT_FALSE(v.pods_left);
  // Before the DisruptionTarget condition (Kubernetes < 1.26), and without container status.
  AttemptView old = view_of("pod-evicted-old.json");
  expect_exit(old, ExitCause::node_lost, "Evicted: The node was low on resource: memory.");
  EXPECT_FALSE(old.exit->exit_code.has_value());
}

TEST(kube_parse_attempt, DeadlineExceededIsTimeLimit) {
  AttemptView v = view_of("pod-deadline-exceeded.json");
  expect_exit(v, ExitCause::time_limit,
              "DeadlineExceeded: Pod was active on the node longer than the specified deadline");
}

TEST(kube_parse_attempt, DisruptionTargets) {
  expect_exit(view_of("pod-preempted.json"), ExitCause::preempted,
              "PreemptionByScheduler: default-scheduler: preempting to accommodate a higher "
              "priority pod");
  expect_exit(view_of("pod-drained.json"), ExitCause::preempted,
              "EvictionByEvictionAPI: Eviction API: evicting (pod orch-12-3-mx325f71-q7w2x on "
              "gpu-a3)");
  expect_exit(view_of("pod-podgc.json"), ExitCause::node_lost,
              "DeletionByPodGC: PodGC: node no longer exists");
  expect_exit(view_of("pod-node-shutdown.json"), ExitCause::node_lost,
              "Terminated: Pod was terminated in response to imminent node shutdown.");
}

TEST(kube_parse_attempt, PodsOnLostNodesEndAtOnce) {
  // The node controller's NodeLost on a pod that is still "Running" (it cannot say otherwise).
  AttemptView lost = view_of("pod-nodelost.json");
  expect_exit(lost, ExitCause::node_lost,
              "NodeLost: Node gpu-a2 which was running pod orch-12-3-mx325f71-q7w2x is "
              "unresponsive");
  EXPECT_TRUE(lost.pods_left);
  EXPECT_EQ(lost.nodes, std::vector<std::string>{"gpu-a2"});

  // The taint manager deleting it for node.kubernetes.io/unreachable:NoExecute.
  AttemptView tainted = view_of("pod-taint-eviction.json");
  expect_exit(tainted, ExitCause::node_lost,
              "DeletionByTaintManager: Taint manager: deleting due to NoExecute taint");
  EXPECT_TRUE(tainted.pods_left);

  // Only the node says so: with the nodes, a pod on a NotReady node is lost...
  std::vector<KubeNode> nodes = cluster_nodes();
  AttemptView seen = view_of("pod-on-notready-node.json", std::nullopt, &nodes);
  expect_exit(seen, ExitCause::node_lost,
              "NodeNotReady: node gpu-a2 is not Ready (Ready=Unknown: NodeStatusUnknown: Kubelet "
              "stopped posting node status.)");
  EXPECT_TRUE(seen.pods_left);
  // ...without them it still looks like it runs.
  EXPECT_EQ(view_of("pod-on-notready-node.json").phase, RunPhase::running);

  // A node that left the cluster.
  std::vector<KubeNode> fewer = {nodes[0]};
  AttemptView gone = view_of("pod-on-notready-node.json", std::nullopt, &fewer);
  expect_exit(gone, ExitCause::node_lost, "node gpu-a2 no longer exists");

  // A healthy node changes nothing.
  EXPECT_EQ(view_of("pod-running.json", std::nullopt, &nodes).phase, RunPhase::running);
}

TEST(kube_parse_attempt, ContainerVanishedWithItsNode) {
  expect_exit(view_of("pod-container-status-unknown.json"), ExitCause::node_lost,
              "ContainerStatusUnknown: The container could not be located when the pod was "
              "deleted.");
}

TEST(kube_parse_attempt, StartErrors) {
  AttemptView no_shell = view_of("pod-start-error.json");
  expect_exit(no_shell, ExitCause::user_error, "stat /bin/sh: no such file or directory");
  EXPECT_EQ(no_shell.exit->exit_code, 128);
  AttemptView nvml = view_of("pod-start-error-nvml.json");
  expect_exit(nvml, ExitCause::node_lost,
              "Auto-detected mode as 'legacy' nvidia-container-cli: initialization error: nvml "
              "error: driver/library version mismatch");
  EXPECT_EQ(nvml.exit->detail.find('\n'), std::string::npos);  // one line
}

TEST(kube_parse_attempt, LongMessagesAreCut) {
  std::vector<PodInfo> list = pods("pod-failed-exit3.json");
  list[0].container->message = std::string(5000, 'x') + "\xc3\xa9";
  AttemptView v = map_attempt(list, std::nullopt);
  ASSERT_TRUE(v.exit.has_value());
  EXPECT_LT(v.exit->detail.size(), 1200U);
  EXPECT_THAT(v.exit->detail, HasSubstr("xxx..."));
}

TEST(kube_parse_attempt, KubeletAdmissionFailureIsTheNodes) {
  expect_exit(view_of("pod-admission-gpu.json"), ExitCause::node_lost,
              "UnexpectedAdmissionError: Pod was rejected: Allocate failed due to requested "
              "number of devices unavailable for nvidia.com/gpu");
}

TEST(kube_parse_attempt, UnknownPhaseKeepsRunning) {
  AttemptView v = view_of("pod-unknown-phase.json");
  EXPECT_EQ(v.phase, RunPhase::running);
  EXPECT_THAT(v.note, HasSubstr("phase Unknown"));
}

// ---- multi-node (Indexed Job) -------------------------------------------------------------

TEST(kube_parse_attempt, IndexedRunningWhileAnyRuns) {
  AttemptView v = view_of("pods-indexed-running.json", job("job-indexed-running.json"));
  EXPECT_EQ(v.phase, RunPhase::running);
  EXPECT_EQ(v.nodes, (std::vector<std::string>{"gpu-a1", "gpu-a2"}));

  // Index 0 failed; index 1 is being killed by the Job controller and still saves its state.
  AttemptView dying = view_of("pods-indexed-one-failed-one-running.json");
  EXPECT_EQ(dying.phase, RunPhase::running);
  EXPECT_FALSE(dying.exit.has_value());

  // One pod runs while the other waits for capacity.
  AttemptView partial = view_of("pods-indexed-partial.json");
  EXPECT_EQ(partial.phase, RunPhase::running);
  EXPECT_TRUE(partial.unschedulable);
  EXPECT_THAT(partial.note, HasSubstr("Unschedulable"));
}

TEST(kube_parse_attempt, IndexedWorstCauseWins) {
  // The Job controller's 143 on index 1 must not hide index 0's exit 1 (listed second).
  AttemptView user = view_of("pods-indexed-user-error.json");
  expect_exit(user, std::nullopt,
              "exit code 1 (pod orch-12-3-mx325f71-0-a1b2c on gpu-a1; 1 of 2 pods)");
  EXPECT_EQ(user.exit->exit_code, 1);
  EXPECT_EQ(user.nodes, (std::vector<std::string>{"gpu-a1", "gpu-a5"}));

  // An evicted pod (node) beats its sibling's 143.
  AttemptView evicted = view_of("pods-indexed-evicted.json");
  expect_exit(evicted, ExitCause::node_lost, "Evicted");
  EXPECT_THAT(evicted.exit->detail, HasSubstr("pod orch-12-3-mx325f71-1-d3e4f on gpu-a5"));

  AttemptView ok = view_of("pods-indexed-succeeded.json");
  expect_exit(ok, std::nullopt, "2 of 2 pods");
  EXPECT_EQ(ok.exit->exit_code, 0);
}

TEST(kube_parse_attempt, IndexedImageErrorEndsTheAttemptAtOnce) {
  // Index 0 would wait at the rendezvous forever: the attempt ends, and the Job must go.
  AttemptView v = view_of("pods-indexed-image-error.json");
  expect_exit(v, ExitCause::user_error, "ImagePullBackOff");
  EXPECT_THAT(v.exit->detail, HasSubstr("pod orch-12-3-mx325f71-1-d3e4f on gpu-a5"));
  EXPECT_TRUE(v.pods_left);
}

TEST(kube_parse_attempt, IndexedLostNodeBeatsEverything) {
  std::vector<KubeNode> nodes = cluster_nodes();
  AttemptView v = view_of("pods-indexed-running.json", job("job-indexed-running.json"), &nodes);
  expect_exit(v, ExitCause::node_lost, "node gpu-a2 is not Ready");
  EXPECT_TRUE(v.pods_left);
  EXPECT_EQ(v.nodes, (std::vector<std::string>{"gpu-a1", "gpu-a2"}));
}

TEST(kube_parse_attempt, WaitsForTheJobsOtherPods) {
  // Only index 0 is listed yet (the Job controller creates pods in batches).
  std::vector<PodInfo> one = pods("pods-indexed-succeeded.json");
  one.resize(1);
  AttemptView v = map_attempt(one, job("job-indexed-running.json"), nullptr);
  EXPECT_EQ(v.phase, RunPhase::running);
  EXPECT_THAT(v.note, HasSubstr("1 of 2 seen"));
}

// ---- the Job ----------------------------------------------------------------------------

TEST(kube_parse_jobs, ParsesTheJobFields) {
  auto j = job("job-failed-backofflimit.json");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->name, "orch-12-3-mx325f71");
  EXPECT_EQ(j->token, "orch-12-3-mx325f71");
  EXPECT_EQ(j->completions, 1);
  EXPECT_EQ(j->parallelism, 1);
  EXPECT_EQ(j->failed, 1);
  EXPECT_EQ(j->active, 0);
  ASSERT_EQ(j->conditions.size(), 2U);
  EXPECT_EQ(j->conditions[1].type, "Failed");
  EXPECT_EQ(j->conditions[1].reason, "BackoffLimitExceeded");
  EXPECT_FALSE(j->deleting);
  EXPECT_TRUE(job("job-deleting.json")->deleting);
  EXPECT_EQ(job("job-indexed-running.json")->completions, 2);

  auto list = parse_jobs(fixture("jobs-list.json"));
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 1U);
  EXPECT_EQ((*list)[0].active, 1);
  EXPECT_EQ(*parse_list_resource_version(fixture("jobs-list.json")), "918471");
}

TEST(kube_parse_jobs, AJobWithoutPods) {
  const std::vector<PodInfo> none;
  EXPECT_EQ(map_attempt(none, std::nullopt).phase, RunPhase::unknown);

  AttemptView running = map_attempt(none, job("job-running.json"));
  EXPECT_EQ(running.phase, RunPhase::queued);
  EXPECT_THAT(running.note, HasSubstr("no pods yet"));

  AttemptView complete = map_attempt(none, job("job-complete.json"));
  expect_exit(complete, std::nullopt, "Complete: Reached expected number of succeeded pods");
  EXPECT_EQ(complete.exit->exit_code, 0);

  AttemptView backoff = map_attempt(none, job("job-failed-backofflimit.json"));
  expect_exit(backoff, std::nullopt,
              "BackoffLimitExceeded: Job has reached the specified backoff limit");
  EXPECT_FALSE(backoff.exit->exit_code.has_value());  // the pods that knew are gone

  expect_exit(map_attempt(none, job("job-failed-deadline.json")), ExitCause::time_limit,
              "DeadlineExceeded: Job was active longer than specified deadline");
  expect_exit(map_attempt(none, job("job-deleting.json")), std::nullopt, "being deleted");

  auto empty = parse_pods(fixture("pods-empty.json"));
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_TRUE(empty->empty());
}

TEST(kube_parse_jobs, JobDeadlineBeatsTheKilledPods) {
  // The Job's activeDeadlineSeconds ran out: its pods died of the controller's SIGTERM.
  std::vector<PodInfo> killed = pods("pods-indexed-user-error.json");
  killed[1].container->exit_code = 143;
  AttemptView v = map_attempt(killed, job("job-failed-deadline.json"), nullptr);
  expect_exit(v, ExitCause::time_limit, "DeadlineExceeded: Job was active longer");
  // Pods that all succeeded finished the work, whatever the Job says about its deadline.
  AttemptView done =
      map_attempt(pods("pods-indexed-succeeded.json"), job("job-failed-deadline.json"), nullptr);
  expect_exit(done, std::nullopt, "Completed");
  EXPECT_EQ(done.exit->exit_code, 0);
}

// ---- malformed --------------------------------------------------------------------------

void expect_bad_pods(std::string_view text, const std::string& words) {
  auto parsed = parse_pods(text);
  ASSERT_FALSE(parsed.ok()) << "accepted: " << text;
  EXPECT_EQ(parsed.error().kind, ErrorKind::invalid);
  EXPECT_THAT(parsed.error().message, HasSubstr(words));
}

TEST(kube_parse_pods, Malformed) {
  expect_bad_pods("not json", "PodList is not valid JSON: 'not json'");
  expect_bad_pods(R"("a string")", "should be a JSON object");
  expect_bad_pods(R"({"kind":"PodList","items":[{"metadata":{"name":"p"},"status":{"phase":3}}]})",
                  "items[0].status.phase should be a string, got number 3");
  expect_bad_pods(
      R"({"items":[{"metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"job","state":{"terminated":{"exitCode":"137"}}}]}}]})",
      "items[0].status.containerStatuses[0].state.terminated.exitCode should be an integer");
  expect_bad_pods(
      R"({"items":[{"metadata":{"name":"p"},"status":{"containerStatuses":[{"name":"job","state":{"terminated":{"exitCode":99999999999}}}]}}]})",
      "fits 32 bits");
  expect_bad_pods(R"({"items":[{"metadata":{"name":"p"},"status":{"containerStatuses":{}}}]})",
                  "containerStatuses should be an array");
  expect_bad_pods(R"({"items":[{"metadata":{"name":"p"},"status":{"containerStatuses":[5]}}]})",
                  "containerStatuses[0] should be an object");
  expect_bad_pods(R"({"items":[{"metadata":{"name":"p","labels":[]}}]})",
                  "items[0].metadata.labels should be an object");
  expect_bad_pods(
      R"({"items":[{"metadata":{"name":"p","annotations":{"batch.kubernetes.io/job-completion-index":"x1"}}}]})",
      "completion index 'x1'");
  expect_bad_pods(R"({"items":[{"spec":{}}]})", "items[0].metadata.name is missing");
  expect_bad_pods(R"({"items":[{"metadata":{"name":"p"},"spec":{"nodeName":["a"]}}]})",
                  "items[0].spec.nodeName");

  auto one = parse_pod(R"({"metadata":{"name":"p"},"status":{"conditions":[{"type":1}]}})");
  ASSERT_FALSE(one.ok());
  EXPECT_THAT(one.error().message, HasSubstr("status.conditions[0].type"));
  auto j = parse_job(R"({"metadata":{"name":"j"},"spec":{"completions":"2"}})");
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.error().message, HasSubstr("spec.completions should be an integer"));
}

TEST(kube_parse_pods, NullsAndAbsentFieldsReadAsEmpty) {
  auto p = parse_pod(
      R"({"metadata":{"name":"p","labels":null,"deletionTimestamp":null},"spec":{"nodeName":null},
          "status":{"phase":"Pending","conditions":null,"containerStatuses":null}})");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->node_name, "");
  EXPECT_FALSE(p->deleting);
  EXPECT_FALSE(p->container.has_value());
  EXPECT_EQ(map_attempt({*p}, std::nullopt).phase, RunPhase::queued);
}

// Nothing throws, whatever the bytes: every fixture, cut short and with bytes flipped.
TEST(kube_parse_pods, NeverThrows) {
  const char* files[] = {"pods-indexed-evicted.json", "pod-nodelost.json", "job-complete.json",
                         "nodes.json"};
  for (const char* f : files) {
    const std::string text = fixture(f);
    for (std::size_t i = 0; i < text.size(); i += 31) {
      std::string cut = text.substr(0, i);
      std::string flipped = text;
      flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
      for (const std::string* t : {&cut, &flipped}) {
        EXPECT_NO_THROW({
          auto a = parse_pods(*t);
          auto b = parse_pod(*t);
          auto c = parse_job(*t);
          auto d = parse_node_list(*t);
          if (a.ok()) (void)map_attempt(*a, std::nullopt);
        });
      }
    }
  }
}

}  // namespace
}  // namespace orch::kube

namespace orch::kube {
namespace {

TEST(kube_parse_time, Rfc3339AsKubernetesWritesIt) {
  EXPECT_EQ(parse_rfc3339_ms("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_rfc3339_ms("2023-11-14T22:13:20Z"), 1'700'000'000'000);
  EXPECT_EQ(parse_rfc3339_ms("2023-11-14T22:13:20.25Z"), 1'700'000'000'250);
  EXPECT_EQ(parse_rfc3339_ms("2023-11-14T23:13:20+01:00"), 1'700'000'000'000);
  for (const char* bad : {"", "2023-11-14", "2023-11-14 22:13:20Z", "2023-13-01T00:00:00Z",
                          "2023-02-30T00:00:00Z", "2023-11-14T22:13:20", "2023-11-14T22:13:20Zx",
                          "2023-11-14T25:13:20Z", "2023-11-14T22:13:20.Z"}) {
    EXPECT_FALSE(parse_rfc3339_ms(bad).has_value()) << bad;
  }
}

constexpr std::int64_t kCreated = 1'700'000'000'000;

PodInfo gang_pod(int index, const std::string& phase) {
  PodInfo p;
  p.name = "orch-1-1-a-" + std::to_string(index);
  p.completion_index = index;
  p.phase = phase;
  p.created_ms = kCreated + index;  // created together, a millisecond apart
  if (phase == "Pending") {
    p.conditions.push_back({"PodScheduled", "False", "Unschedulable",
                            "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity "
                            "rules."});
  }
  return p;
}

TEST(kube_parse_gang, APartlyScheduledGangEndsAfterTheTimeout) {
  std::vector<PodInfo> gang = {gang_pod(0, "Running"), gang_pod(1, "Pending")};
  EXPECT_FALSE(gang_timed_out(gang, kCreated + 299'999, 300).has_value());
  auto late = gang_timed_out(gang, kCreated + 300'000, 300);
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->cause, ExitCause::gang_timeout);
  EXPECT_THAT(late->detail, HasSubstr("1 of 2 pods not running 300 s after the gang was created"));
  EXPECT_THAT(late->detail, HasSubstr("anti-affinity"));
}

TEST(kube_parse_gang, AMissingIndexCountsAsNotRunning) {
  // Index 2 has no pod (yet): the gang is 3 pods, 2 of them running.
  std::vector<PodInfo> gang = {gang_pod(0, "Running"), gang_pod(2, "Running")};
  auto late = gang_timed_out(gang, kCreated + 600'000, 300);
  ASSERT_TRUE(late.has_value());
  EXPECT_THAT(late->detail, HasSubstr("1 of 3 pods"));
}

TEST(kube_parse_gang, AGangIsNotOverWhileSomeOfItsPodsAreStillToCome) {
  PodInfo done = gang_pod(0, "Succeeded");
  done.container = ContainerStatusInfo{"job", "terminated", "Completed", "", 0, std::nullopt};
  done.gang_size = 3;
  AttemptView v = map_attempt({done}, std::nullopt);
  EXPECT_EQ(v.phase, RunPhase::running);
  EXPECT_THAT(v.note, HasSubstr("1 of 3 seen"));
  // The gang rule counts the pods not yet made as not running.
  auto late = gang_timed_out({done}, kCreated + 600'000, 300);
  ASSERT_TRUE(late.has_value());
  EXPECT_THAT(late->detail, HasSubstr("2 of 3 pods"));
}

TEST(kube_parse_gang, WhatTheRuleLeavesAlone) {
  const std::int64_t much_later = kCreated + 3'600'000;
  // Every pod started (or done): a gang, whatever happens next.
  EXPECT_FALSE(gang_timed_out({gang_pod(0, "Running"), gang_pod(1, "Succeeded")}, much_later, 300)
                   .has_value());
  // A pod alone waits for capacity as long as it must.
  EXPECT_FALSE(gang_timed_out({gang_pod(0, "Pending")}, much_later, 300).has_value());
  // No creation time to count from.
  PodInfo a = gang_pod(0, "Running"), b = gang_pod(1, "Pending");
  a.created_ms.reset();
  b.created_ms.reset();
  EXPECT_FALSE(gang_timed_out({a, b}, much_later, 300).has_value());
}

TEST(kube_parse_pods, ReadsTheCreationTimeAndTheGangSize) {
  auto p = parse_pod(
      R"({"metadata":{"name":"p","creationTimestamp":"2023-11-14T22:13:20Z",)"
      R"("annotations":{"orchestrate.dev/gang-size":"4"}},"status":{"phase":"Pending"}})");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->created_ms, 1'700'000'000'000);
  EXPECT_EQ(p->gang_size, 4);
  auto odd =
      parse_pod(R"({"metadata":{"name":"p","annotations":{"orchestrate.dev/gang-size":"lots"}}})");
  ASSERT_TRUE(odd.ok()) << odd.error().message;
  EXPECT_FALSE(odd->gang_size.has_value());
}

}  // namespace
}  // namespace orch::kube
