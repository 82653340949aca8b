#pragma once
// How orchestrate reads what a Kubernetes API server answers: pure parsers of its JSON (Node,
// Pod and Job lists and objects, watch events, Status errors) and the mapping of an attempt's
// pods to RunPhase + ExitStatus. No I/O: everything here is tested on JSON in the shapes the
// API server and `kubectl get -o json` print (tests/unit/kube/fixtures).
//
// Malformed input (not JSON, a field of the wrong type, a list without items, an object
// without a name) is an ErrorKind::invalid error that names the field and quotes what was
// there; nothing here throws. Fields the parsers do not need are ignored, and optional fields
// that are absent or null read as empty.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/common/result.h"

namespace orch::kube {

inline constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";

struct KubeCondition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
};

struct KubeTaint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

// ---- nodes ------------------------------------------------------------------------------

struct KubeNode {
  // name (metadata.name); gpus from status.allocatable[<gpu_resource>] (0 without it);
  // healthy = Ready condition True, not spec.unschedulable, and no NoSchedule/NoExecute taint
  // (orchestrate tolerates none yet; PreferNoSchedule is ignored); reason lists what is wrong,
  // "; "-separated: "NotReady: KubeletNotReady: container runtime is down",
  // "NotReady (Ready=Unknown): NodeStatusUnknown: Kubelet stopped posting node status.",
  // "no Ready condition", "unschedulable (cordoned)", "taint nvidia.com/gpu=broken:NoSchedule".
  // The taints Kubernetes derives from what is already named (node.kubernetes.io/unschedulable
  // after a cordon, node.kubernetes.io/not-ready and .../unreachable on a node that is not
  // Ready) are not repeated.
  NodeInfo info;
  std::string gpu_product;  // label nvidia.com/gpu.product ("NVIDIA-H100-80GB-HBM3"), "" if none
  std::string ready;        // status of the Ready condition, "" when the node has none
  bool unschedulable = false;
  std::vector<KubeTaint> taints;
  std::vector<KubeCondition> conditions;
  std::string resource_version;
};

// A NodeList (GET /api/v1/nodes) and one Node (a watch event's object).
Result<std::vector<KubeNode>> parse_node_list(std::string_view json,
                                              std::string_view gpu_resource = "nvidia.com/gpu");
Result<KubeNode> parse_node(std::string_view json,
                            std::string_view gpu_resource = "nvidia.com/gpu");
std::vector<NodeInfo> node_infos(const std::vector<KubeNode>& nodes);

// A resource quantity that must be a whole number: "8", "0", "2k", "4Ki", "8000m" -> 8.
// Fractions ("1.5", "500m"), signs, exponents and values over INT_MAX are ErrorKind::invalid.
Result<int> parse_whole_quantity(std::string_view quantity);

// ---- pods and jobs ----------------------------------------------------------------------

struct ContainerStatusInfo {
  std::string name;
  std::string state;             // "waiting", "running", "terminated"; "" when the status has none
  std::string reason;            // of that state ("ImagePullBackOff", "OOMKilled", "Error", ...)
  std::string message;           // of that state
  std::optional<int> exit_code;  // terminated only
  std::optional<int> signal;     // terminated only, when the runtime reports one (rare)
};

struct PodInfo {
  std::string name;
  std::string namespace_;
  std::string node_name;                // spec.nodeName, "" until scheduled
  std::string phase;                    // Pending, Running, Succeeded, Failed, Unknown
  std::string reason;                   // status.reason: Evicted, NodeLost, DeadlineExceeded, ...
  std::string message;                  // status.message
  std::string token;                    // label orchestrate.dev/token
  std::optional<int> completion_index;  // batch.kubernetes.io/job-completion-index
  std::optional<int> gang_size;         // annotation orchestrate.dev/gang-size (>= 2)
  // annotation orchestrate.dev/heartbeat-timeout-ms (> 0): the attempt's heartbeat timeout
  std::optional<std::int64_t> heartbeat_timeout_ms;
  bool deleting = false;                // metadata.deletionTimestamp is set
  // metadata.creationTimestamp as ms since the epoch; nullopt when absent or unreadable.
  std::optional<std::int64_t> created_ms;
  std::vector<KubeCondition> conditions;
  // The container orchestrate runs ("job"; else the first status listed); nullopt before the
  // kubelet reports any.
  std::optional<ContainerStatusInfo> container;
  std::string resource_version;
};

Result<std::vector<PodInfo>> parse_pods(std::string_view json);  // a PodList
Result<PodInfo> parse_pod(std::string_view json);                // one Pod

struct KubeJobInfo {
  std::string name;
  std::string uid;    // metadata.uid (what an ownerReference to the Job names)
  std::string token;  // label orchestrate.dev/token
  int completions = 1;
  int parallelism = 1;
  int active = 0;
  int succeeded = 0;
  int failed = 0;
  bool deleting = false;
  bool suspended = false;  // spec.suspend: no pods are created (Kueue has not admitted it)
  std::string queue;       // label kueue.x-k8s.io/queue-name, "" without Kueue
  std::vector<KubeCondition> conditions;  // Complete, Failed, FailureTarget, SuccessCriteriaMet...
  std::string resource_version;
};

Result<std::vector<KubeJobInfo>> parse_jobs(std::string_view json);  // a JobList
Result<KubeJobInfo> parse_job(std::string_view json);                // one Job

// ---- the attempt ------------------------------------------------------------------------

struct AttemptView {
  RunPhase phase = RunPhase::unknown;
  std::optional<ExitStatus> exit;  // set when phase == exited
  std::vector<std::string> nodes;  // nodes of the attempt's pods, by completion index
  // Why it is queued ("Unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu."),
  // or what the view assumed; "" when nothing needs saying.
  std::string note;
  bool unschedulable = false;  // a pod waits for capacity the cluster does not have now
  // Exited while some pod still exists unfinished (an image that cannot be pulled, a pod on a
  // lost node, a sibling of either): the adapter must delete the Job so nothing lingers.
  bool pods_left = false;
};

// The attempt's state from its pods, its Job (nullopt when the Job is gone or not known) and,
// when the caller has it, the cluster's nodes (to tell a pod on a node that is NotReady or no
// longer exists). Per pod:
//
//   Pending, PodScheduled=False/Unschedulable   -> queued, unschedulable, note = the message
//   Pending otherwise (scheduling, pulling...)  -> queued
//   waiting reason ImagePullBackOff, ErrImagePull, InvalidImageName, ErrImageNeverPull,
//     CreateContainerConfigError, CreateContainerError
//                                              -> exited, ExitCause::user_error, detail = the
//     reason and Kubernetes' message. The kubelet retries these forever but they do not fix
//     themselves (a wrong image name, a missing secret); a registry outage reads the same and
//     is blamed on the job too: its message says which.
//   Running (also while terminating)           -> running
//   Unknown                                     -> running, with a note
//   not yet Succeeded/Failed, but no kubelet will finish it -> exited, ExitCause::node_lost:
//     on a node that is not Ready or no longer exists (only when `nodes` is given);
//     status.reason NodeLost (the node controller: "Node X which was running pod Y is
//     unresponsive"); DisruptionTarget=True with reason DeletionByTaintManager (a NoExecute
//     taint such as node.kubernetes.io/unreachable) or DeletionByPodGC (the Node is gone).
//     A pod whose DisruptionTarget is TerminationByKubelet, EvictionByEvictionAPI or
//     PreemptionByScheduler is being stopped by a live kubelet: it runs on through its grace
//     period (its checkpoint) and is judged when it is Failed.
//   Succeeded                                  -> exited, exit code 0
//   Failed, DisruptionTarget=True, reason
//     PreemptionByScheduler                    -> ExitCause::preempted
//     EvictionByEvictionAPI (a drain)          -> ExitCause::preempted (the provider took the
//                                                 node back; the node did not fail)
//     DeletionByTaintManager, DeletionByPodGC, TerminationByKubelet, any other
//                                              -> ExitCause::node_lost
//   Failed, status.reason Evicted (node-pressure eviction: the node ran short of memory or
//     disk), NodeLost, Shutdown/Terminated (graceful node shutdown), OutOf<resource> or
//     UnexpectedAdmissionError (the kubelet refused the pod: its devices are not what the
//     scheduler believed)                      -> ExitCause::node_lost. Eviction is the node's
//     condition acting, not the job's code failing, so it spends the infra budget and moves
//     the job off that node.
//   Failed, status.reason DeadlineExceeded     -> ExitCause::time_limit
//   Failed, terminated.reason OOMKilled        -> ExitCause::out_of_memory
//   Failed, terminated.reason ContainerStatusUnknown (the container vanished with its node)
//                                              -> ExitCause::node_lost
//   Failed, terminated.reason StartError / ContainerCannotRun (the runtime could not start
//     the command): a message about the GPU runtime (nvidia, nvml) -> node_lost; about
//     a missing executable or file -> user_error; else launch_failed
//   Failed otherwise                           -> the exit code as reported (terminated.
//     exitCode; `signal` only where the runtime sets it), no stated cause: classify_exit
//     decides (137/143 killed_by_signal, other non-zero user_error, none lost). A code 128+N
//     is kept as a code: sh reports a child that died of signal N that way, and a segfaulting
//     trainer (139) is the job's fault, not the machine's.
//
// Over the pods of the attempt (one, or one per index of an Indexed Job):
// - an exited pod that Kubernetes still shows unfinished (the waiting reasons and lost nodes
//   above) ends the attempt at once, whatever its siblings do: nothing would end them;
// - else running while any pod runs (or some ended and others still wait), queued while every
//   pod waits, exited when every pod ended (and, with a Job, all its completions have pods);
// - the worst cause wins: node_lost > preempted > time_limit > launch_failed > out_of_memory >
//   user_error > killed_by_signal > no exit status > success. A Job whose Failed condition
//   says DeadlineExceeded counts as time_limit. (With backoffLimit 0 the Job controller kills
//   the siblings of a failed pod; their 143s must not hide the failure that caused it.)
// - no pods: with a Job that is Complete (or SuccessCriteriaMet) -> exited 0; Failed ->
//   exited with the condition's reason and message (DeadlineExceeded -> time_limit, else no
//   exit status); being deleted -> exited, no exit status; else queued. Neither pods nor a
//   Job -> unknown.
// ExitStatus.detail: "<reason>: <message> (pod <name> on <node>)", e.g. "Evicted: The node
// was low on resource: memory. ... (pod orch-1-2-x-0-abcde on gpu-3)", "Error, exit code 3
// (pod ...)"; for a multi-pod attempt "; <k> of <n> pods" inside the parentheses counts the
// pods that ended as badly. Kubernetes' words are put on one line (control characters as
// blanks) and cut at 1024 bytes. node_lost is set with ExitCause::node_lost.
AttemptView map_attempt(const std::vector<PodInfo>& pods, const std::optional<KubeJobInfo>& job,
                        const std::vector<KubeNode>* nodes = nullptr);

// An RFC 3339 time as Kubernetes writes it ("2026-12-01T20:00:00Z", also with a fraction of a
// second or a "+01:00" offset) in ms since the epoch; nullopt for anything else.
std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text);

// The gang rule (issue 14): an attempt of several pods (one per node) whose pods are not all
// running (or done) gang_timeout_s after the first of them was created ends as gang_timeout:
// a gang that cannot all be scheduled must not hold the nodes it got. The gang's size is the
// pods' gang-size annotation, the number of pods seen, or one more than the highest completion
// index, whichever is largest. nullopt while the rule
// does not apply: one pod, every pod started, or the time not yet up (a pod without a creation
// time is not judged). The detail says how many pods wait and why ("2 of 3 pods not running
// 300 s after the gang was created: Unschedulable: 0/2 nodes are available: ...").
std::optional<ExitStatus> gang_timed_out(const std::vector<PodInfo>& pods, std::int64_t now_ms,
                                         double gang_timeout_s);

// ---- watch and lists --------------------------------------------------------------------

enum class WatchEventType { added, modified, deleted, error, bookmark };

// The Status object of a failed request or of a watch ERROR event.
struct ApiStatus {
  int code = 0;        // HTTP code: 410, 404, 409, 422...
  std::string reason;  // Expired, Gone, NotFound, AlreadyExists, Invalid...
  std::string message;
};

struct WatchEvent {
  WatchEventType type = WatchEventType::added;
  std::string object;               // the object as JSON (for parse_pod, parse_job, parse_node)
  std::string kind;                 // the object's kind ("Pod", "Job", "Status"...), may be ""
  std::string name;                 // the object's metadata.name ("" for BOOKMARK and ERROR)
  std::string resource_version;     // the object's metadata.resourceVersion ("" for ERROR)
  std::optional<ApiStatus> status;  // ERROR only
  // ERROR 410 (reason Expired or Gone): the resourceVersion is too old; list again, then
  // watch from the list's resourceVersion.
  bool gone = false;
};

// One line of a watch stream ({"type":"ADDED","object":{...}}), a trailing '\r' or '\n'
// allowed. An unknown type is ErrorKind::invalid.
Result<WatchEvent> parse_watch_event(std::string_view line);

// metadata.resourceVersion of a list (PodList, JobList, NodeList), where a watch resumes.
Result<std::string> parse_list_resource_version(std::string_view json);

// A Status body (kind "Status"), as sent with a failed request. Not a Status -> invalid.
Result<ApiStatus> parse_api_status(std::string_view json);

}  // namespace orch::kube
