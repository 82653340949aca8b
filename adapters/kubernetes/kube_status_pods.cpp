// orch_kube_parse: Pods and Jobs.
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_status_json.h"

namespace orch::kube {
using namespace detail;
namespace {

std::optional<ContainerStatusInfo> read_entry(Reader& r, const Json& c, const std::string& cp);

std::optional<ContainerStatusInfo> read_container(Reader& r, const Json& status,
                                                  const std::string& p) {
  const Json* list = r.array(status, "containerStatuses", at(p, "containerStatuses"));
  if (list == nullptr || list->empty()) return std::nullopt;
  std::size_t chosen = 0;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& c = (*list)[i];
    if (c.is_object() && c.contains("name") && c["name"].is_string() &&
        c["name"].get<std::string>() == kContainerName) {
      chosen = i;
      break;
    }
  }
  return read_entry(r, (*list)[chosen], at(p, "containerStatuses", chosen));
}

// An init container that keeps the pod from starting (the agent's, issue 44): one waiting for
// another reason than its turn (ErrImagePull, CreateContainerConfigError, ...) or one that
// ended non-zero. Its status stands for the pod's container then, its message naming it.
std::optional<ContainerStatusInfo> read_init_failure(Reader& r, const Json& status,
                                                     const std::string& p) {
  const Json* list = r.member(status, "initContainerStatuses");
  if (list == nullptr || !list->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto info = read_entry(r, (*list)[i], at(p, "initContainerStatuses", i));
    if (!info) continue;
    const bool stuck = info->state == "waiting" && !info->reason.empty() &&
                       info->reason != "PodInitializing" && info->reason != "ContainerCreating";
    const bool failed = info->state == "terminated" && info->exit_code.value_or(0) != 0;
    if (!stuck && !failed) continue;
    info->message = "init container " + info->name + ": " +
                    (info->message.empty() ? info->reason : info->message);
    return info;
  }
  return std::nullopt;
}

std::optional<ContainerStatusInfo> read_entry(Reader& r, const Json& c, const std::string& cp) {
  if (!c.is_object()) {
    r.fail(cp, "an object", c);
    return std::nullopt;
  }
  ContainerStatusInfo info;
  info.name = r.str(c, "name", at(cp, "name"));
  const Json* state = r.object(c, "state", at(cp, "state"));
  if (state == nullptr) return info;
  for (const char* kind : {"terminated", "waiting", "running"}) {
    const Json* s = r.object(*state, kind, at(cp, "state." + std::string(kind)));
    if (s == nullptr) continue;
    std::string sp = at(cp, "state." + std::string(kind));
    info.state = kind;
    info.reason = r.str(*s, "reason", at(sp, "reason"));
    info.message = r.str(*s, "message", at(sp, "message"));
    if (info.state == "terminated") {
      info.exit_code = r.integer(*s, "exitCode", at(sp, "exitCode"));
      auto sig = r.integer(*s, "signal", at(sp, "signal"));
      if (sig && *sig > 0) info.signal = sig;
    }
    break;
  }
  return info;
}

std::optional<int> read_index(Reader& r, const Json& metadata, const std::string& p) {
  for (const char* where : {"annotations", "labels"}) {
    const Json* m = r.object(metadata, where, at(p, "metadata." + std::string(where)));
    if (m == nullptr) continue;
    std::string text = r.str(
        *m, kCompletionIndexKey,
        at(p, "metadata." + std::string(where) + "[" + std::string(kCompletionIndexKey) + "]"));
    if (text.empty()) continue;
    auto n = parse_whole_quantity(text);
    if (!n || text.find_first_not_of("0123456789") != std::string::npos) {
      r.fail_text(at(p, "metadata." + std::string(where)) + ": completion index '" + quote(text) +
                  "' is not a number");
      return std::nullopt;
    }
    return *n;
  }
  return std::nullopt;
}

PodInfo read_pod(Reader& r, const Json& obj, const std::string& p) {
  PodInfo pod;
  const Json* metadata = nullptr;
  pod.name = read_name(r, obj, p, &metadata);
  if (!r.ok()) return pod;
  pod.namespace_ = r.str(*metadata, "namespace", at(p, "metadata.namespace"));
  pod.resource_version = r.str(*metadata, "resourceVersion", at(p, "metadata.resourceVersion"));
  pod.deleting = r.member(*metadata, "deletionTimestamp") != nullptr;
  if (const Json* created = r.member(*metadata, "creationTimestamp");
      created && created->is_string()) {
    pod.created_ms = parse_rfc3339_ms(created->get<std::string>());
  }
  if (const Json* labels = r.object(*metadata, "labels", at(p, "metadata.labels"))) {
    pod.token = r.str(*labels, kTokenLabel, at(p, "metadata.labels[orchestrate.dev/token]"));
  }
  pod.completion_index = read_index(r, *metadata, p);
  // Written by orchestrate's own manifest; a value it cannot have written is left unread.
  if (const Json* a = r.member(*metadata, "annotations"); a && a->is_object()) {
    if (auto it = a->find(kGangSizeAnnotation); it != a->end() && it->is_string()) {
      auto n = parse_whole_quantity(it->get<std::string>());
      if (n && *n >= 2) pod.gang_size = *n;
    }
    if (auto it = a->find(kHeartbeatTimeoutAnnotation); it != a->end() && it->is_string()) {
      auto n = parse_whole_quantity(it->get<std::string>());
      if (n && *n > 0) pod.heartbeat_timeout_ms = *n;
    }
  }
  if (const Json* spec = r.object(obj, "spec", at(p, "spec"))) {
    pod.node_name = r.str(*spec, "nodeName", at(p, "spec.nodeName"));
  }
  if (const Json* status = r.object(obj, "status", at(p, "status"))) {
    std::string sp = at(p, "status");
    pod.phase = r.str(*status, "phase", at(sp, "phase"));
    pod.reason = r.str(*status, "reason", at(sp, "reason"));
    pod.message = r.str(*status, "message", at(sp, "message"));
    pod.conditions = read_conditions(r, *status, sp);
    pod.container = read_container(r, *status, sp);
    const bool not_started =
        !pod.container || pod.container->state.empty() ||
        (pod.container->state == "waiting" && pod.container->reason == "PodInitializing");
    if (not_started) {
      if (auto init = read_init_failure(r, *status, sp)) pod.container = init;
    }
  }
  return pod;
}

KubeJobInfo read_job(Reader& r, const Json& obj, const std::string& p) {
  KubeJobInfo job;
  const Json* metadata = nullptr;
  job.name = read_name(r, obj, p, &metadata);
  if (!r.ok()) return job;
  job.resource_version = r.str(*metadata, "resourceVersion", at(p, "metadata.resourceVersion"));
  job.uid = r.str(*metadata, "uid", at(p, "metadata.uid"));
  job.deleting = r.member(*metadata, "deletionTimestamp") != nullptr;
  if (const Json* labels = r.object(*metadata, "labels", at(p, "metadata.labels"))) {
    job.token = r.str(*labels, kTokenLabel, at(p, "metadata.labels[orchestrate.dev/token]"));
    job.queue = r.str(*labels, kQueueLabel, at(p, "metadata.labels[kueue.x-k8s.io/queue-name]"));
  }
  if (const Json* spec = r.object(obj, "spec", at(p, "spec"))) {
    job.completions = r.integer(*spec, "completions", at(p, "spec.completions")).value_or(1);
    job.parallelism = r.integer(*spec, "parallelism", at(p, "spec.parallelism")).value_or(1);
    job.suspended = r.boolean(*spec, "suspend", at(p, "spec.suspend"));
  }
  if (const Json* status = r.object(obj, "status", at(p, "status"))) {
    std::string sp = at(p, "status");
    job.active = r.integer(*status, "active", at(sp, "active")).value_or(0);
    job.succeeded = r.integer(*status, "succeeded", at(sp, "succeeded")).value_or(0);
    job.failed = r.integer(*status, "failed", at(sp, "failed")).value_or(0);
    job.conditions = read_conditions(r, *status, sp);
  }
  return job;
}

}  // namespace

Result<std::vector<PodInfo>> parse_pods(std::string_view json) {
  return parse_list<PodInfo>(json, "PodList", read_pod);
}

Result<PodInfo> parse_pod(std::string_view json) {
  return parse_one<PodInfo>(json, "Pod", read_pod);
}

Result<std::vector<KubeJobInfo>> parse_jobs(std::string_view json) {
  return parse_list<KubeJobInfo>(json, "JobList", read_job);
}

Result<KubeJobInfo> parse_job(std::string_view json) {
  return parse_one<KubeJobInfo>(json, "Job", read_job);
}

}  // namespace orch::kube
