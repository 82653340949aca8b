#pragma once
// What orchestrate POSTs to a Kubernetes API server for one attempt, and where. Pure: the
// client (kube_client.h) sends `job_body` to `jobs_path` (and, for a multi-node attempt,
// `service_body` to `services_path` first), and finds the attempt again by `label_selector`.
//
// One attempt is one batch/v1 Job:
// - Named after the launch token (job_name_for_token): the token itself when it is already a
//   DNS-1123 label of at most kMaxJobName characters, else a lower-cased, cut and cleaned form
//   with "-<8 hex digits of a hash of the token>" appended, so two tokens never share a name.
//   The name is short enough for the pod host names of an Indexed Job ("<job>-<index>").
// - Labelled orchestrate.dev/token=<token>, orchestrate.dev/job-id, orchestrate.dev/attempt
//   (and app.kubernetes.io/managed-by=orchestrate) on the Job and its pod template; the job's
//   display name, when it has one, goes into the annotation orchestrate.dev/job-name (control
//   characters and invalid UTF-8 as '?', at most 256 bytes).
// - backoffLimit 0 (the brain decides restarts), restartPolicy Never, terminationGracePeriod-
//   Seconds from KubernetesSpec::termination_grace_s (time to save a checkpoint after SIGTERM),
//   enableServiceLinks false (no service variables in the job's environment),
//   automountServiceAccountToken false (the job does not talk to the API).
// - Pod settings (kube_pod_settings.h): the job's over the cluster's (merge_pod_settings):
//   image, volumes (PVC; hostPath only where kubernetes.allow_host_path), /dev/shm as a
//   memory-backed emptyDir of shm_size, imagePullSecrets, serviceAccountName (its token then
//   mounted), nodeSelector, tolerations, extra resource limits, priorityClassName.
// - Kueue (kubernetes.queue): the Job is created suspended with kueue.x-k8s.io/queue-name;
//   Kueue unsuspends it when admitted (until then its attempt reads queued).
// - With code or setup (LaunchRequest::code_sha256, setup; issue 40): the command is
//   ["/bin/sh", "-c", task_prelude(request), "orch-task", <the job's shell argv>...] and the
//   env has workdir_env's variables (scheduler/model/workdir.h), ORCH_SETUP_FAILED being
//   setup_failed_marker: the code, the setup's lock, cache and that marker live under the
//   cluster's storage root, on one of its volumes, where the storage helper reads them.
// - The agent (issue 44; kube_agent_container.h), unless kubernetes.agent_image is "none": an
//   init container copies it into an emptyDir and the command below runs under its `run`.
// - One container "job": the image, command ["/bin/sh", "-c", <request.command>],
//   env = request.env then ORCH_LAUNCH_TOKEN (and ORCH_TOKEN: launch_token_env), ORCH_JOB_ID,
//   ORCH_ATTEMPT, ORCH_GPUS (nodes x
//   gpus_per_node), ORCH_SITE (the cluster's name) and, multi-node, ORCH_RENDEZVOUS (these win
//   over request.env), resources.limits[<gpu_resource>] = gpus_per_node (omitted for 0).
// - secret_env: never a value in the Job. Each variable is valueFrom.secretKeyRef {name: the
//   attempt's Secret, key: the variable}, the Secret (kube_secret.h) in the plan beside the
//   Job. A secret wins over request.env of the same name; the contract variables win over
//   both. Secret values are not subject to $(NAME) expansion (the kubelet expands `value`
//   only), so they are written as they are; a NUL byte is refused, naming the variable.
// - exclude_nodes: a required node affinity with one term that excludes them twice over
//   (a term's requirements are ANDed): matchExpressions kubernetes.io/hostname NotIn <names>
//   (the names that are valid label values) and one matchFields metadata.name NotIn <name> per
//   node (the API allows a single value per matchFields requirement), because a node's name
//   and its hostname label usually agree but need not.
// - nodes > 1: an Indexed Job (completionMode Indexed, completions = parallelism = nodes)
//   whose pods have subdomain = a headless Service (clusterIP None, selector on the token
//   label, publishNotReadyAddresses true, no ports) named like the Job; every pod gets
//   ORCH_RENDEZVOUS=<job>-0.<service>, the DNS name of index 0 (Kubernetes also sets
//   JOB_COMPLETION_INDEX). The Service is created before the Job and deleted with it.
//
// Kubernetes expands "$(NAME)" in a container's command, args and env values, and reads "$$"
// as "$". Every '$' of the command and of env values is therefore written "$$", so the process
// gets the exact bytes orchestrate was given (expand_kube_references() is the kubelet's rule,
// for tests and the fake API server).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/cluster_port.h"
#include "scheduler/common/dns_name.h"
#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::kube {

inline constexpr std::string_view kTokenLabel = "orchestrate.dev/token";
inline constexpr std::string_view kJobIdLabel = "orchestrate.dev/job-id";
inline constexpr std::string_view kAttemptLabel = "orchestrate.dev/attempt";
inline constexpr std::string_view kJobNameAnnotation = "orchestrate.dev/job-name";
// Where the Job controller writes each pod's index of an Indexed Job (annotation and label).
inline constexpr std::string_view kCompletionIndexKey = "batch.kubernetes.io/job-completion-index";
// On every pod of a gang (an Indexed Job): how many pods the gang has, so that an observer
// that sees only some of them (the Job controller creates them one by one) does not take the
// ones it sees for all.
inline constexpr std::string_view kGangSizeAnnotation = "orchestrate.dev/gang-size";
// On every pod of an attempt launched with heartbeats (heartbeat_s and heartbeat_timeout_s > 0):
// the attempt's heartbeat timeout in whole milliseconds, so that the site judges the silence of
// its pushed records (issue 44) by it, a restarted server included.
inline constexpr std::string_view kHeartbeatTimeoutAnnotation =
    "orchestrate.dev/heartbeat-timeout-ms";
inline constexpr std::string_view kContainerName = "job";
// Kueue's label naming the LocalQueue a Job is submitted to.
inline constexpr std::string_view kQueueLabel = "kueue.x-k8s.io/queue-name";
// Longest Job name: a pod host name "<job>-<index>" must stay a 63-character DNS label.
inline constexpr std::size_t kMaxJobName = 56;

struct KubeLaunchPlan {
  std::string namespace_;
  std::string job_name;
  std::string service_name;    // multi-node only, else empty
  std::string jobs_path;       // /apis/batch/v1/namespaces/<ns>/jobs (POST job_body here)
  std::string job_path;        // jobs_path + "/<job_name>" (GET, DELETE)
  std::string services_path;   // /api/v1/namespaces/<ns>/services (POST service_body here)
  std::string service_path;    // services_path + "/<service_name>", empty without a service
  std::string job_body;        // batch/v1 Job, JSON
  std::string service_body;    // v1 Service, JSON; empty for a single-node attempt
  std::string label_selector;  // "orchestrate.dev/token=<token>" (URL-encode it in a query)
  // With secret_env values or a push credential only (kube_secret.h), else empty: the Secret
  // that holds them, created before the Job, whose container env names it by secretKeyRef.
  std::string secret_name;   // secret_name_for(job_name)
  std::string secrets_path;  // /api/v1/namespaces/<ns>/secrets (POST secret_body here)
  std::string secret_path;   // secrets_path + "/<secret_name>" (PATCH, DELETE)
  std::string secret_body;   // v1 Secret, JSON (the values base64): never log or quote it
  std::map<std::string, std::string> secret_values;  // what the env refers to: var -> value
};

// Where the pod's agent pushes its records home (issue 44; scheduler/pushed_records.h): the
// server's base URL (https://HOST[:PORT]), its CA as PEM text ("" = the system trust store)
// and the attempt's credential, which goes into the attempt's Secret, never into the Job.
struct PushLaunch {
  std::string url;
  std::string ca_pem;
  std::string credential;
};

// ErrorKind::invalid, naming the value, for what cannot be launched safely or exactly: a token
// that is not a label value (1-63 characters of [A-Za-z0-9._-], starting and ending with a
// letter or digit); an environment variable name outside [A-Za-z_][A-Za-z0-9_]*; a NUL byte
// or invalid UTF-8 in the command or an env value (a process cannot receive them); fewer than
// 1 node or negative gpus_per_node; an empty image or one with blanks or control characters;
// a gpu_resource that is not a qualified resource name; a negative termination grace; a
// namespace that is not a DNS-1123 label; an excluded node name that is not a DNS-1123
// subdomain (as every node name is); an agent image with blanks, a push URL that is not
// https://HOST[:PORT] or an empty push credential (kube_agent_container.h).
// With the agent (KubernetesSpec::agent_image not "none"), every pod gets it
// (kube_agent_container.h); `push`, ignored without the agent, adds the push variables and
// makes the attempt's Secret hold the credential.
Result<KubeLaunchPlan> make_launch_plan(const LaunchRequest& request, const ClusterSpec& cluster,
                                        const std::string& namespace_,
                                        const PushLaunch* push = nullptr);

// Where an attempt's pods write that its setup failed ("exit N" and the setup's last lines;
// workdir.h's kSetupFailedFile): <storage_root>/setup/failed.<token>. The site reads it through
// its storage helper when a pod ends with kSetupFailedExit.
std::string setup_failed_marker(const ClusterSpec& cluster, const std::string& token);

// The Job name of a token, as described above (the token must already be valid).
std::string job_name_for_token(const std::string& token);

// "orchestrate.dev/token=<token>".
std::string token_label_selector(const std::string& token);

// API paths (namespace and names are not escaped: they are DNS labels).
std::string jobs_path(const std::string& namespace_);
std::string services_path(const std::string& namespace_);
// The headless Service of a multi-node attempt's Job (a DNS-1035 label).
std::string service_name_for(const std::string& job_name);
std::string pods_path(const std::string& namespace_);
std::string pod_log_path(const std::string& namespace_, const std::string& pod);
std::string nodes_path();

// The body of a DELETE that removes a Job and lets the garbage collector remove its pods in
// the background: {"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}.
std::string delete_background_body();

// '$' -> "$$": what Kubernetes' expansion turns back into the input.
std::string escape_kube_references(std::string_view s);

// The kubelet's expansion of a command, arg or env value (third_party/forked/golang/expansion
// in Kubernetes): "$$" -> "$", "$(NAME)" -> vars[NAME] when NAME is there (else left as is),
// any other '$' kept.
std::string expand_kube_references(std::string_view s,
                                   const std::map<std::string, std::string>& vars);

// DNS-1123 labels and subdomains (scheduler/common/dns_name.h).
using ::orch::is_dns_label;
using ::orch::is_dns_subdomain;

// 8 hex digits of a hash of s (FNV-1a): the suffix that keeps cut names apart.
std::string hash8(std::string_view s);

}  // namespace orch::kube
