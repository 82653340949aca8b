// orch_kube_parse: map_attempt, an attempt's pods (and Job) as a RunPhase and ExitStatus; the
// gang rule over the pods' creation times (gang_timed_out, parse_rfc3339_ms).
#include <algorithm>
#include <chrono>
#include <map>

#include "adapters/kubernetes/kube_status_json.h"

namespace orch::kube {
using namespace detail;
namespace {

// Severity of an ended pod's outcome, for "the worst cause wins".
int severity(const ExitStatus& e) {
  constexpr int kSignal = 128;
  ExitCause c = ExitCause::lost;
  if (e.cause) {
    c = *e.cause;
  } else if (e.node_lost) {
    c = ExitCause::node_lost;
  } else if (e.signal) {
    c = ExitCause::killed_by_signal;
  } else if (e.exit_code) {
    int code = *e.exit_code;
    if (code == 0) {
      c = ExitCause::succeeded;
    } else if (code == kSignal + 9 || code == kSignal + 15) {
      c = ExitCause::killed_by_signal;
    } else {
      c = ExitCause::user_error;
    }
  }
  switch (c) {
    case ExitCause::node_lost:
      return 9;
    case ExitCause::preempted:
      return 8;
    case ExitCause::time_limit:
      return 7;
    case ExitCause::launch_failed:
      return 6;
    case ExitCause::out_of_memory:
      return 5;
    case ExitCause::user_error:
      return 4;
    case ExitCause::killed_by_signal:
      return 3;
    case ExitCause::succeeded:
      return 1;
    default:
      return 2;
  }
}

enum class Fate { queued, running, ended, stuck };

struct PodVerdict {
  const PodInfo* pod = nullptr;
  Fate fate = Fate::queued;
  ExitStatus exit;  // ended and stuck
  std::string note;
  bool unschedulable = false;
};

// Whether text contains `needle` (given in lower case), ignoring case.
bool contains_ci(std::string_view text, std::string_view needle) {
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  if (needle.size() > text.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= text.size(); ++i) {
    bool match = true;
    for (std::size_t k = 0; k < needle.size() && match; ++k)
      match = lower(text[i + k]) == needle[k];
    if (match) return true;
  }
  return false;
}

constexpr std::string_view kUserWaitingReasons[] = {
    "ImagePullBackOff",           "ErrImagePull",         "InvalidImageName", "ErrImageNeverPull",
    "CreateContainerConfigError", "CreateContainerError",
};

bool is_user_waiting_reason(std::string_view reason) {
  return std::find(std::begin(kUserWaitingReasons), std::end(kUserWaitingReasons), reason) !=
         std::end(kUserWaitingReasons);
}

ExitStatus with_cause(ExitCause cause, std::string detail) {
  ExitStatus e;
  e.cause = cause;
  e.node_lost = cause == ExitCause::node_lost;
  e.detail = std::move(detail);
  return e;
}

// The container's exit code and signal, when it reported a termination.
void copy_termination(const PodInfo& pod, ExitStatus& e) {
  if (pod.container && pod.container->state == "terminated") {
    e.exit_code = pod.container->exit_code;
    e.signal = pod.container->signal;
  }
}

// Why a Failed pod failed.
ExitStatus failed_pod_status(const PodInfo& pod) {
  const std::optional<ContainerStatusInfo>& c = pod.container;
  const bool terminated = c && c->state == "terminated";
  const std::string term_reason = terminated ? c->reason : "";
  const std::string pod_words = reason_and_message(pod.reason, pod.message);
  ExitStatus e;

  if (const KubeCondition* d = find_condition(pod.conditions, "DisruptionTarget");
      d != nullptr && d->status == "True") {
    bool preempt = d->reason == "PreemptionByScheduler" ||
                   d->reason == "PreemptionByKubeScheduler" || d->reason == "EvictionByEvictionAPI";
    std::string words = reason_and_message(d->reason, d->message);
    if (!pod_words.empty() && pod.reason != d->reason) {
      // The kubelet repeats its eviction message in the condition: say it once.
      words = pod_words + " (" + (trimmed(d->message) == trimmed(pod.message) ? d->reason : words) +
              ")";
    }
    e = with_cause(preempt ? ExitCause::preempted : ExitCause::node_lost, words);
  } else if (pod.reason == "Evicted" || pod.reason == "NodeLost" || pod.reason == "Shutdown" ||
             pod.reason == "Terminated" || pod.reason == "UnexpectedAdmissionError" ||
             pod.reason.rfind("OutOf", 0) == 0) {
    e = with_cause(ExitCause::node_lost, pod_words);
  } else if (pod.reason == "DeadlineExceeded") {
    e = with_cause(ExitCause::time_limit, pod_words);
  } else if (term_reason == "OOMKilled") {
    e = with_cause(ExitCause::out_of_memory, reason_and_message(c->reason, c->message));
  } else if (term_reason == "ContainerStatusUnknown") {
    e = with_cause(ExitCause::node_lost, reason_and_message(c->reason, c->message));
  } else if (term_reason == "StartError" || term_reason == "ContainerCannotRun") {
    const std::string& m = c->message;
    ExitCause cause = ExitCause::launch_failed;
    if (contains_ci(m, "nvidia") || contains_ci(m, "nvml")) {
      cause = ExitCause::node_lost;
    } else if (contains_ci(m, "executable file not found") ||
               contains_ci(m, "no such file or directory")) {
      cause = ExitCause::user_error;
    }
    e = with_cause(cause, reason_and_message(c->reason, c->message));
  } else {
    std::string words = terminated ? reason_and_message(c->reason, c->message) : pod_words;
    if (terminated && c->exit_code) {
      std::string code = "exit code " + std::to_string(*c->exit_code);
      words = words.empty() ? code : words + ", " + code;
    } else if (words.empty()) {
      words = "Failed without a container status";
    }
    e.detail = words;
  }
  copy_termination(pod, e);
  return e;
}

std::string ready_words(const KubeNode& node) {
  const KubeCondition* ready = find_condition(node.conditions, "Ready");
  if (ready == nullptr) return "no Ready condition";
  std::string why = reason_and_message(ready->reason, ready->message);
  return "Ready=" + ready->status + (why.empty() ? "" : ": " + why);
}

PodVerdict judge_pod(const PodInfo& pod, const std::map<std::string, const KubeNode*>* nodes) {
  PodVerdict v;
  v.pod = &pod;
  if (pod.phase == "Succeeded") {
    v.fate = Fate::ended;
    v.exit.exit_code = 0;
    std::string reason =
        pod.container && !pod.container->reason.empty() ? pod.container->reason : "Succeeded";
    v.exit.detail = reason;
    return v;
  }
  if (pod.phase == "Failed") {
    v.fate = Fate::ended;
    v.exit = failed_pod_status(pod);
    return v;
  }
  // Still live as far as Kubernetes knows.
  if (nodes != nullptr && !pod.node_name.empty()) {
    auto it = nodes->find(pod.node_name);
    if (it == nodes->end()) {
      v.fate = Fate::stuck;
      v.exit =
          with_cause(ExitCause::node_lost, "NodeLost: node " + pod.node_name + " no longer exists");
      return v;
    }
    if (it->second->ready != "True") {
      v.fate = Fate::stuck;
      v.exit =
          with_cause(ExitCause::node_lost, "NodeNotReady: node " + pod.node_name +
                                               " is not Ready (" + ready_words(*it->second) + ")");
      return v;
    }
  }
  // The node controller's word that the node is unreachable (NodeLost), or a deletion by the
  // taint manager (a NoExecute taint such as node.kubernetes.io/unreachable) or by the pod
  // garbage collector (the node object is gone): no kubelet will finish this pod.
  if (pod.reason == "NodeLost") {
    v.fate = Fate::stuck;
    v.exit = with_cause(ExitCause::node_lost, reason_and_message(pod.reason, pod.message));
    return v;
  }
  if (const KubeCondition* d = find_condition(pod.conditions, "DisruptionTarget");
      d != nullptr && d->status == "True" &&
      (d->reason == "DeletionByTaintManager" || d->reason == "DeletionByPodGC")) {
    v.fate = Fate::stuck;
    v.exit = with_cause(ExitCause::node_lost, reason_and_message(d->reason, d->message));
    return v;
  }
  if (pod.container && pod.container->state == "waiting" &&
      is_user_waiting_reason(pod.container->reason)) {
    v.fate = Fate::stuck;
    v.exit = with_cause(ExitCause::user_error,
                        reason_and_message(pod.container->reason, pod.container->message));
    return v;
  }
  if (pod.phase == "Running") {
    v.fate = Fate::running;
    return v;
  }
  if (pod.phase == "Unknown") {
    v.fate = Fate::running;
    v.note = "pod " + pod.name + " is in phase Unknown (its node does not report)";
    return v;
  }
  v.fate = Fate::queued;
  const KubeCondition* sched = find_condition(pod.conditions, "PodScheduled");
  if (sched != nullptr && sched->status == "False") {
    v.unschedulable = sched->reason == "Unschedulable";
    v.note =
        reason_and_message(sched->reason.empty() ? "not scheduled" : sched->reason, sched->message);
  } else if (pod.container && pod.container->state == "waiting" && !pod.container->reason.empty()) {
    v.note = reason_and_message(pod.container->reason, pod.container->message);
  }
  return v;
}

std::string where(const PodInfo& pod) {
  return "pod " + pod.name + (pod.node_name.empty() ? ", not scheduled" : " on " + pod.node_name);
}

bool job_finished_ok(const KubeJobInfo& job) {
  return condition_true(job.conditions, "Complete") ||
         condition_true(job.conditions, "SuccessCriteriaMet");
}

const KubeCondition* job_failure(const KubeJobInfo& job) {
  for (const char* type : {"Failed", "FailureTarget"}) {
    const KubeCondition* c = find_condition(job.conditions, type);
    if (c != nullptr && c->status == "True") return c;
  }
  return nullptr;
}

AttemptView from_job_only(const std::optional<KubeJobInfo>& job) {
  AttemptView view;
  if (!job) return view;  // unknown
  const std::string suffix = " (Job " + job->name + ", which has no pods left)";
  if (job_finished_ok(*job)) {
    const KubeCondition* c = find_condition(job->conditions, "Complete");
    if (c == nullptr || c->status != "True")
      c = find_condition(job->conditions, "SuccessCriteriaMet");
    ExitStatus e;
    e.exit_code = 0;
    e.detail = reason_and_message(c->type, c->message) + suffix;
    view.phase = RunPhase::exited;
    view.exit = e;
    return view;
  }
  if (const KubeCondition* f = job_failure(*job)) {
    ExitStatus e;
    if (f->reason == "DeadlineExceeded") e.cause = ExitCause::time_limit;
    e.detail = reason_and_message(f->reason.empty() ? f->type : f->reason, f->message) + suffix;
    view.phase = RunPhase::exited;
    view.exit = e;
    return view;
  }
  if (job->deleting) {
    ExitStatus e;
    e.detail = "the Job " + job->name + " is being deleted and has no pods left";
    view.phase = RunPhase::exited;
    view.exit = e;
    return view;
  }
  view.phase = RunPhase::queued;
  view.note = job->suspended ? "the Job " + job->name + " waits for Kueue to admit it" +
                                   (job->queue.empty() ? "" : " (LocalQueue " + job->queue + ")")
                             : "the Job " + job->name + " has no pods yet";
  return view;
}

}  // namespace

AttemptView map_attempt(const std::vector<PodInfo>& pods, const std::optional<KubeJobInfo>& job,
                        const std::vector<KubeNode>* nodes) {
  if (pods.empty()) return from_job_only(job);

  std::map<std::string, const KubeNode*> node_map;
  if (nodes != nullptr) {
    for (const auto& n : *nodes) node_map[n.info.name] = &n;
  }

  // Pods by completion index (unindexed last), then name.
  std::vector<const PodInfo*> order;
  order.reserve(pods.size());
  for (const auto& p : pods) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const PodInfo* a, const PodInfo* b) {
    int ia = a->completion_index.value_or(INT_MAX);
    int ib = b->completion_index.value_or(INT_MAX);
    return ia != ib ? ia < ib : a->name < b->name;
  });

  AttemptView view;
  std::vector<PodVerdict> verdicts;
  bool any_stuck = false;
  bool any_live = false;
  bool any_running = false;
  bool any_ended = false;
  for (const PodInfo* p : order) {
    if (!p->node_name.empty() &&
        std::find(view.nodes.begin(), view.nodes.end(), p->node_name) == view.nodes.end()) {
      view.nodes.push_back(p->node_name);
    }
    PodVerdict v = judge_pod(*p, nodes != nullptr ? &node_map : nullptr);
    any_stuck = any_stuck || v.fate == Fate::stuck;
    any_live = any_live || v.fate == Fate::queued || v.fate == Fate::running;
    any_running = any_running || v.fate == Fate::running;
    any_ended = any_ended || v.fate == Fate::ended;
    if (v.unschedulable && !view.unschedulable) {
      view.unschedulable = true;
      view.note = v.note;
    }
    if (view.note.empty() && !v.note.empty()) view.note = v.note;
    verdicts.push_back(std::move(v));
  }

  if (!any_stuck && any_live) {
    view.phase = (any_running || any_ended) ? RunPhase::running : RunPhase::queued;
    return view;
  }
  if (!any_stuck && job && !job_finished_ok(*job) && job_failure(*job) == nullptr &&
      static_cast<int>(pods.size()) < job->completions) {
    view.phase = RunPhase::running;
    view.note = "waiting for the Job's other pods (" + std::to_string(pods.size()) + " of " +
                std::to_string(job->completions) + " seen)";
    return view;
  }
  // A gang whose pods seen so far all succeeded, while others are still to come (the Job
  // controller creates them one by one): not over yet.
  int gang = 0;
  for (const PodInfo* p : order) gang = std::max(gang, p->gang_size.value_or(0));
  ExitStatus ok;
  ok.exit_code = 0;
  const bool all_succeeded =
      std::all_of(verdicts.begin(), verdicts.end(), [&](const PodVerdict& v) {
        return v.fate == Fate::ended && severity(v.exit) <= severity(ok);
      });
  if (!any_stuck && all_succeeded && static_cast<int>(pods.size()) < gang) {
    view.phase = RunPhase::running;
    view.note = "waiting for the gang's other pods (" + std::to_string(pods.size()) + " of " +
                std::to_string(gang) + " seen)";
    return view;
  }

  // Exited: the worst outcome wins.
  view.phase = RunPhase::exited;
  const PodVerdict* worst = nullptr;
  int worst_rank = -1;
  for (const auto& v : verdicts) {
    if (v.fate != Fate::ended && v.fate != Fate::stuck) continue;
    int rank = severity(v.exit);
    if (rank > worst_rank) {
      worst_rank = rank;
      worst = &v;
    }
  }
  // Every pod exited here, or a stuck one did: worst is set.
  ExitStatus exit = worst->exit;
  int same = 0;
  for (const auto& v : verdicts) {
    if ((v.fate == Fate::ended || v.fate == Fate::stuck) && severity(v.exit) == worst_rank) ++same;
  }
  std::string place = where(*worst->pod);
  if (pods.size() > 1) {
    place += "; " + std::to_string(same) + " of " + std::to_string(pods.size()) + " pods";
  }
  exit.detail = exit.detail.empty() ? place : exit.detail + " (" + place + ")";
  // The Job's deadline explains pods it killed, but not pods that all finished their work.
  ExitStatus success;
  success.exit_code = 0;
  if (job && worst_rank > severity(success)) {
    const KubeCondition* f = job_failure(*job);
    if (f != nullptr && f->reason == "DeadlineExceeded") {
      ExitStatus deadline =
          with_cause(ExitCause::time_limit,
                     reason_and_message(f->reason, f->message) + " (Job " + job->name + ")");
      if (severity(deadline) > worst_rank) exit = deadline;
    }
  }
  view.exit = exit;
  // Pods Kubernetes still shows unfinished outlive this view: the Job must be deleted.
  view.pods_left = any_stuck;
  return view;
}

}  // namespace orch::kube

namespace orch::kube {
namespace {

// Two digits at text[i..i+1] (and more with n) as a number; -1 when they are not digits.
int digits(std::string_view text, std::size_t i, std::size_t n) {
  if (i + n > text.size()) return -1;
  int v = 0;
  for (std::size_t k = i; k < i + n; ++k) {
    if (text[k] < '0' || text[k] > '9') return -1;
    v = v * 10 + (text[k] - '0');
  }
  return v;
}

bool started(const PodInfo& pod) {
  return pod.phase == "Running" || pod.phase == "Succeeded" || pod.phase == "Failed" ||
         pod.phase == "Unknown";
}

}  // namespace

std::optional<std::int64_t> parse_rfc3339_ms(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || (t[10] != 'T' && t[10] != 't') ||
      t[13] != ':' || t[16] != ':') {
    return std::nullopt;
  }
  const int year = digits(t, 0, 4), month = digits(t, 5, 2), day = digits(t, 8, 2);
  const int hour = digits(t, 11, 2), minute = digits(t, 14, 2), second = digits(t, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day ymd{std::chrono::year(year),
                                        std::chrono::month(static_cast<unsigned>(month)),
                                        std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok()) return std::nullopt;
  std::size_t i = 19;
  std::int64_t ms = 0;
  if (i < t.size() && t[i] == '.') {
    std::int64_t scale = 100;
    std::size_t k = i + 1;
    for (; k < t.size() && t[k] >= '0' && t[k] <= '9'; ++k) {
      ms += (t[k] - '0') * scale;
      scale /= 10;
    }
    if (k == i + 1) return std::nullopt;
    i = k;
  }
  std::int64_t offset_min = 0;
  if (i < t.size() && (t[i] == 'Z' || t[i] == 'z') && i + 1 == t.size()) {
    offset_min = 0;
  } else if (i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && t[i + 3] == ':') {
    const int oh = digits(t, i + 1, 2), om = digits(t, i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return std::nullopt;
    offset_min = (t[i] == '+' ? 1 : -1) * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  const std::int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
  const std::int64_t secs = ((days * 24 + hour) * 60 + minute) * 60 + second - offset_min * 60;
  return secs * 1000 + ms;
}

std::optional<ExitStatus> gang_timed_out(const std::vector<PodInfo>& pods, std::int64_t now_ms,
                                         double gang_timeout_s) {
  std::size_t gang = pods.size();
  std::optional<std::int64_t> first_created;
  int running = 0;
  const PodInfo* waiting = nullptr;
  for (const PodInfo& pod : pods) {
    if (pod.completion_index) {
      gang = std::max(gang, static_cast<std::size_t>(*pod.completion_index) + 1);
    }
    if (pod.gang_size) gang = std::max(gang, static_cast<std::size_t>(*pod.gang_size));
    if (pod.created_ms && (!first_created || *pod.created_ms < *first_created)) {
      first_created = pod.created_ms;
    }
    if (started(pod)) {
      ++running;
    } else if (waiting == nullptr) {
      waiting = &pod;
    }
  }
  if (gang < 2 || static_cast<std::size_t>(running) >= gang || !first_created) return std::nullopt;
  const auto timeout_ms = static_cast<std::int64_t>(gang_timeout_s * 1000);
  if (now_ms - *first_created < timeout_ms) return std::nullopt;
  ExitStatus s;
  s.cause = ExitCause::gang_timeout;
  s.detail = std::to_string(gang - static_cast<std::size_t>(running)) + " of " +
             std::to_string(gang) + " pods not running " +
             std::to_string(static_cast<std::int64_t>(gang_timeout_s)) +
             " s after the gang was created";
  if (waiting != nullptr) {
    std::string why;
    for (const KubeCondition& c : waiting->conditions) {
      if (c.type == "PodScheduled" && c.status == "False")
        why = reason_and_message(c.reason, c.message);
    }
    if (why.empty())
      why = "pod " + waiting->name + " is " +
            (waiting->phase.empty() ? "not created" : waiting->phase);
    s.detail += ": " + why;
  }
  return s;
}

}  // namespace orch::kube
