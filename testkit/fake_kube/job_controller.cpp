#include "testkit/fake_kube/job_controller.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "testkit/fake_kube/admission.h"
#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/pod_status.h"

namespace orch::fake_kube {
namespace {

constexpr const char* kIndexKey = "batch.kubernetes.io/job-completion-index";

std::string ns_of(const json& o) {
  return string_at(o, {"metadata", "namespace"});
}
std::string name_of(const json& o) {
  return string_at(o, {"metadata", "name"});
}
std::string uid_of(const json& o) {
  return string_at(o, {"metadata", "uid"});
}

std::string owner_uid(const json& o) {
  const json& refs = at_path(o, {"metadata", "ownerReferences"});
  if (!refs.is_array()) return "";
  for (const json& r : refs) {
    if (at_path(r, {"controller"}) == true) return string_at(r, {"uid"});
  }
  return "";
}

// Whether any of the object's ownerReferences names `uid` (a Secret's owner is no controller).
bool owned_by(const json& o, const std::string& uid) {
  const json& refs = at_path(o, {"metadata", "ownerReferences"});
  if (!refs.is_array()) return false;
  return std::any_of(refs.begin(), refs.end(),
                     [&](const json& r) { return string_at(r, {"uid"}) == uid; });
}

long long pod_index(const json& pod) {
  const std::string text = string_at(at_path(pod, {"metadata", "annotations"}), {kIndexKey});
  return parse_count(json(text));
}

std::string index_ranges(const std::set<long long>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    long long first = *it;
    long long last = first;
    for (++it; it != indexes.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ",";
    out += std::to_string(first);
    if (last != first) out += "-" + std::to_string(last);
  }
  return out;
}

}  // namespace

bool job_finished(const json& job) {
  return condition_status(job, "Complete") == "True" || condition_status(job, "Failed") == "True";
}

void delete_pod(ObjectStore& store, const json& pod, long long grace) {
  if (grace < 0) grace = int_at(pod, {"spec", "terminationGracePeriodSeconds"}, 30);
  const bool ran = !string_at(pod, {"spec", "nodeName"}).empty() && !pod_terminal(pod);
  if (grace == 0 || !ran) {
    store.remove("pods", ns_of(pod), name_of(pod));
    return;
  }
  store.update("pods", ns_of(pod), name_of(pod), [&](json& p) {
    if (!at_path(p, {"metadata", "deletionTimestamp"}).is_null()) return;
    p["metadata"]["deletionTimestamp"] =
        rfc3339(std::chrono::system_clock::now() + std::chrono::seconds(grace));
    p["metadata"]["deletionGracePeriodSeconds"] = grace;
  });
}

json delete_object(ObjectStore& store, const std::string& resource, const json& object,
                   const std::string& policy, long long grace) {
  const std::string uid = uid_of(object);
  std::string effective = policy;
  if (effective.empty()) effective = resource == "jobs" ? "Orphan" : "Background";
  if (effective == "Orphan" || effective == "Foreground") {
    for (const char* dependents : {"pods", "services", "jobs", "secrets", "workloads"}) {
      for (const json& d : store.all(dependents)) {
        if (!owned_by(d, uid)) continue;
        if (effective == "Foreground") {
          if (std::string(dependents) == "pods") {
            delete_pod(store, d, -1);
          } else {
            store.remove(dependents, ns_of(d), name_of(d));
          }
          continue;
        }
        store.update(dependents, ns_of(d), name_of(d), [&](json& o) {
          json& refs = o["metadata"]["ownerReferences"];
          json kept = json::array();
          for (const json& r : refs) {
            if (string_at(r, {"uid"}) != uid) kept.push_back(r);
          }
          if (kept.empty()) {
            o["metadata"].erase("ownerReferences");
          } else {
            refs = kept;
          }
        });
      }
    }
  }
  if (resource == "pods") {
    delete_pod(store, object, grace);
    auto still = store.get("pods", ns_of(object), name_of(object));
    return still ? *still : object;
  }
  auto removed = store.remove(resource, ns_of(object), name_of(object));
  return removed ? *removed : object;
}

void JobController::reconcile() {
  const std::vector<json> jobs = store_.all("jobs");
  const std::vector<json> pods = store_.all("pods");
  std::set<std::string> live;
  for (const json& job : jobs) {
    const std::string uid = uid_of(job);
    live.insert(uid);
    std::vector<json> owned;
    for (const json& p : pods) {
      if (owner_uid(p) == uid) owned.push_back(p);
    }
    reconcile_job(job, owned);
  }
  for (auto it = counted_.begin(); it != counted_.end();) {
    it = live.count(it->first) ? std::next(it) : counted_.erase(it);
  }
}

void JobController::reconcile_job(const json& job, const std::vector<json>& pods) {
  const json& spec = job["spec"];
  const long long completions = int_at(spec, {"completions"}, 1);
  const long long parallelism = int_at(spec, {"parallelism"}, 1);
  const long long backoff_limit = int_at(spec, {"backoffLimit"}, 6);
  const bool indexed = string_at(spec, {"completionMode"}) == "Indexed";
  const bool suspended = at_path(spec, {"suspend"}) == true;
  const bool finished = job_finished(job);
  Counted& c = counted_[uid_of(job)];

  std::vector<json> active;
  long long terminating = 0;
  long long ready = 0;
  for (const json& pod : pods) {
    const std::string phase = string_at(pod, {"status", "phase"});
    const bool deleting = !at_path(pod, {"metadata", "deletionTimestamp"}).is_null();
    if (deleting && !pod_terminal(pod)) ++terminating;
    if (finished) {
      if (!deleting && !pod_terminal(pod)) active.push_back(pod);
      continue;
    }
    if (phase == "Succeeded") {
      c.succeeded.insert(uid_of(pod));
      if (indexed && pod_index(pod) >= 0) c.completed_indexes.insert(pod_index(pod));
    } else if (c.suspended.count(uid_of(pod)) > 0) {
      continue;  // ended by the suspension, not failed
    } else if (phase == "Failed" || deleting) {
      c.failed.insert(uid_of(pod));
    } else {
      active.push_back(pod);
      if (condition_status(pod, "Ready") == "True") ++ready;
    }
  }

  json status =
      job.contains("status") && job["status"].is_object() ? job["status"] : json::object();
  const auto now = std::chrono::system_clock::now();
  const auto delete_active = [&] {
    for (const json& pod : active) delete_pod(store_, pod, -1);
  };
  const auto finish = [&](const char* target, const char* type, const std::string& reason,
                          const std::string& message) {
    json probe = {{"status", status}};
    set_condition(probe, target, "True", reason, message);
    set_condition(probe, type, "True", reason, message);
    status = probe["status"];
    for (json& cond : status["conditions"]) cond["lastProbeTime"] = cond["lastTransitionTime"];
  };

  if (finished || suspended) {
    if (suspended && !finished) {
      for (const json& pod : active) c.suspended.insert(uid_of(pod));
    }
    delete_active();
  } else {
    if (!status.contains("startTime")) status["startTime"] = rfc3339(now);
    const auto started = parse_rfc3339(status["startTime"].get<std::string>());
    const long long deadline = int_at(spec, {"activeDeadlineSeconds"}, -1);
    const long long done = indexed ? static_cast<long long>(c.completed_indexes.size())
                                   : static_cast<long long>(c.succeeded.size());
    if (static_cast<long long>(c.failed.size()) > backoff_limit) {
      delete_active();
      finish("FailureTarget", "Failed", "BackoffLimitExceeded",
             "Job has reached the specified backoff limit");
    } else if (deadline >= 0 && now - started >= std::chrono::seconds(deadline)) {
      delete_active();
      finish("FailureTarget", "Failed", "DeadlineExceeded",
             "Job was active longer than specified deadline");
    } else if (done >= completions) {
      delete_active();
      finish("SuccessCriteriaMet", "Complete", "CompletionsReached",
             "Reached expected number of succeeded pods");
      status["completionTime"] = rfc3339(now);
    } else if (indexed) {
      std::set<long long> running;
      for (const json& pod : active) running.insert(pod_index(pod));
      long long slots = parallelism - static_cast<long long>(active.size());
      for (long long i = 0; i < completions && slots > 0; ++i) {
        if (c.completed_indexes.count(i) || running.count(i)) continue;
        create_pod(job, i);
        --slots;
      }
    } else {
      const long long want =
          std::min(parallelism, completions - done) - static_cast<long long>(active.size());
      for (long long i = 0; i < want; ++i) create_pod(job, -1);
    }
  }

  const auto set_count = [&](const char* key, long long n) {
    if (n > 0) {
      status[key] = n;
    } else {
      status.erase(key);
    }
  };
  set_count("active", static_cast<long long>(active.size()));
  if (!finished) {
    set_count("succeeded", static_cast<long long>(c.succeeded.size()));
    set_count("failed", static_cast<long long>(c.failed.size()));
  }
  status["ready"] = ready;
  status["terminating"] = terminating;
  status["uncountedTerminatedPods"] = json::object();
  if (indexed && !c.completed_indexes.empty()) {
    status["completedIndexes"] = index_ranges(c.completed_indexes);
  }
  store_.update("jobs", ns_of(job), name_of(job), [&](json& j) { j["status"] = status; });
}

void JobController::create_pod(const json& job, long long index) {
  const json& tmpl = job["spec"]["template"];
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  json meta = tmpl.contains("metadata") ? tmpl["metadata"] : json::object();
  meta["namespace"] = ns_of(job);
  meta["generateName"] = name_of(job) + "-" + (index >= 0 ? std::to_string(index) + "-" : "");
  meta["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                          {"kind", "Job"},
                                          {"name", name_of(job)},
                                          {"uid", uid_of(job)},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  json spec = tmpl.contains("spec") ? tmpl["spec"] : json::object();
  if (index >= 0) {
    meta["annotations"][kIndexKey] = std::to_string(index);
    meta["labels"][kIndexKey] = std::to_string(index);
    spec["hostname"] = name_of(job) + "-" + std::to_string(index);
    // Every container, init containers included (as the real Job controller does).
    for (const char* list : {"initContainers", "containers"}) {
      if (!spec.contains(list) || !spec[list].is_array()) continue;
      for (json& c : spec[list]) {
        json& env = c["env"];
        if (!env.is_array()) env = json::array();
        env.push_back(
            {{"name", "JOB_COMPLETION_INDEX"},
             {"valueFrom",
              {{"fieldRef",
                {{"apiVersion", "v1"},
                 {"fieldPath",
                  "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}}}});
      }
    }
  }
  pod["metadata"] = meta;
  pod["spec"] = spec;
  admit_pod(pod);
  store_.create("pods", pod);
}

void JobController::collect_garbage() {
  for (const char* resource : {"pods", "services", "jobs", "secrets", "workloads"}) {
    for (const json& o : store_.all(resource)) {
      const json& refs = at_path(o, {"metadata", "ownerReferences"});
      if (!refs.is_array() || refs.empty()) continue;
      const bool owned = std::any_of(refs.begin(), refs.end(), [&](const json& r) {
        return store_.uid_exists(string_at(r, {"uid"}));
      });
      if (owned) continue;
      if (std::string(resource) == "pods") {
        delete_pod(store_, o, -1);
      } else {
        delete_object(store_, resource, o, "Background", -1);
      }
    }
  }
}

}  // namespace orch::fake_kube
