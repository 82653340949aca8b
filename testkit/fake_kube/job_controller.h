#pragma once
// The fake's job controller and garbage collector.
//
// reconcile(): for each batch/v1 Job, creates its pods from the template (parallelism,
// completions; Indexed completion mode: one pod per index with the completion-index annotation
// and label, JOB_COMPLETION_INDEX, hostname <job>-<index>), counts each finished pod once
// (a pod being deleted that has not succeeded counts as failed, as with the default
// podReplacementPolicy), replaces failed pods until backoffLimit, enforces
// activeDeadlineSeconds, and writes status (active, ready, succeeded, failed, terminating,
// startTime, completionTime, completedIndexes, conditions SuccessCriteriaMet/Complete or
// FailureTarget/Failed). Pods of a finished job that still run are deleted.
//
// collect_garbage(): deletes objects (pods, services, jobs, secrets) whose every ownerReference
// names an object that no longer exists (what a Background deletion of a Job relies on, and
// what removes the Secret a Job owns).
//
// Not thread-safe: the Cluster calls it under its lock.

#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/object_store.h"

namespace orch::fake_kube {

// Starts the graceful deletion of a pod: removed at once when it never ran on a node or has
// ended, else marked with deletionTimestamp for the kubelet to terminate. grace < 0: the pod's
// terminationGracePeriodSeconds.
void delete_pod(ObjectStore& store, const json& pod, long long grace = -1);
// Whether the Job has its Complete or Failed condition.
bool job_finished(const json& job);

// DELETE of any object with DeleteOptions.propagationPolicy: "Background" removes it and leaves
// its dependents to collect_garbage(); "Foreground" deletes the dependents first (the real server
// keeps the owner with a foregroundDeletion finalizer until they are gone); "Orphan" (the
// default for batch/v1 Jobs, as in the real API) removes the ownerReferences of the dependents.
// Pods go through delete_pod. Returns the object as the API answers a DELETE.
json delete_object(ObjectStore& store, const std::string& resource, const json& object,
                   const std::string& policy, long long grace);

class JobController {
 public:
  explicit JobController(ObjectStore& store) : store_(store) {}
  void reconcile();
  void collect_garbage();

 private:
  struct Counted {
    std::set<std::string> succeeded;  // pod uids
    std::set<std::string> failed;
    std::set<long long> completed_indexes;
    // Pods deleted because the Job was suspended: not failures (the real controller does not
    // count them either; Kueue's preemption suspends Jobs).
    std::set<std::string> suspended;
  };
  void reconcile_job(const json& job, const std::vector<json>& pods);
  void create_pod(const json& job, long long index);

  ObjectStore& store_;
  std::map<std::string, Counted> counted_;  // by job uid
};

}  // namespace orch::fake_kube
