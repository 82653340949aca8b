// KubernetesSite and its agents (issue 44): the records they push home judged with the API's
// view of their pods (kube_pushed.h), and the save signal delivered through pods/exec.
#include <chrono>

#include "adapters/kubernetes/kube_agent_container.h"
#include "adapters/kubernetes/kube_pushed.h"
#include "adapters/kubernetes/kube_site.h"
#include "scheduler/spec/job_spec.h"

namespace orch {
namespace {

constexpr std::chrono::milliseconds kSignalTimeout{15000};  // one pod's exec

// /bin/sh and its builtins only (a job's image need not have sed or grep): the agent's pid from
// the start record of its event file, then the signal to it. No file or no start record yet:
// nothing runs that could take it (exit 0).
std::string signal_script(const std::string& signal) {
  return "f='" + std::string(kube::kAgentEventsPath) +
         "'; [ -r \"$f\" ] || exit 0\n"
         "while IFS= read -r line; do\n"
         "  case $line in *'\"agent_pid\":'*)\n"
         "    p=${line#*'\"agent_pid\":'}; p=${p%%[!0-9]*}\n"
         "    [ -n \"$p\" ] && exec kill -" +
         signal +
         " \"$p\";;\n"
         "  esac\n"
         "done < \"$f\"\n"
         "exit 0\n";
}

}  // namespace

void KubernetesSite::apply_pushed(const std::string& token, const std::vector<kube::PodInfo>& pods,
                                  kube::AttemptView& view, std::vector<TaskAlert>& alerts) {
  if (push_ == nullptr || push_->records == nullptr) return;
  if (view.phase != RunPhase::running && view.phase != RunPhase::exited) return;
  const std::vector<PushedTask> tasks = push_->records->tasks(token);
  if (tasks.empty()) return;
  if (view.phase == RunPhase::running) {
    kube::PushedVerdict v = kube::judge_pushed(
        pods, tasks, {push_->records->now_ms(), push_->records->serving_since_ms()});
    alerts = std::move(v.alerts);
    if (v.exit) {
      view.phase = RunPhase::exited;
      view.exit = std::move(v.exit);
      view.pods_left = true;  // the silent pod still runs as far as Kubernetes knows
    }
    return;
  }
  // Ended: a fault the agent pushed is why (the job it stopped, or that died of it), unless
  // Kubernetes names a cause outside the job (its node lost, a preemption).
  if (view.exit && view.exit->cause != ExitCause::node_lost &&
      view.exit->cause != ExitCause::preempted) {
    if (auto fault = kube::pushed_fault(pods, tasks)) view.exit = std::move(fault);
  }
}

Result<void> KubernetesSite::signal(const std::string& token, const std::string& signal) {
  if (!is_save_signal(signal)) {
    return make_error(ErrorKind::invalid,
                      "cannot send signal \"" + signal + "\": expected USR1, USR2, INT or HUP");
  }
  auto pods = pods_of(token);
  if (!pods) return pods.error();
  const std::vector<std::string> command = {"/bin/sh", "-c", signal_script(signal)};
  for (const kube::PodInfo& pod : *pods) {
    if (pod.phase != "Running" || pod.deleting || pod.node_name.empty()) continue;
    // A pod that ended meanwhile (exec refused), whose agent is gone, or whose kubelet does not
    // answer has nothing to save or cannot: the brain stops the attempt after its grace anyway
    // (TERM, which the protocol also saves on). One pod's failure does not keep the signal
    // from the others.
    (void)client_->exec(
        namespace_, pod.name, std::string(kube::kContainerName), command, nullptr,
        [](int, std::string_view) { return true; }, kSignalTimeout);
  }
  return Ok{};
}

}  // namespace orch
