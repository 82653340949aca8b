#pragma once
// The agent in every pod (issue 44): what make_launch_plan (kube_manifest.h) adds to a job's pod
// when the cluster has an agent image (KubernetesSpec::agent_image, not "none"). Pure.
//
// - A volume kAgentVolume, an emptyDir, mounted at kAgentMountPath in the init container and in
//   the job's container.
// - An init container kAgentInitContainer of the agent image (agents/Dockerfile: the static
//   agent at /orchestrate-agent) running `/orchestrate-agent install <kAgentPath>`: the agent
//   copied into the volume before the job's container starts. It inherits the pod's
//   imagePullSecrets; it asks for no GPU.
// - The job's container runs `<kAgentPath> run` with the flags the Slurm batch script gives
//   srun's tasks (adapters/slurm/batch_script.h): --events kAgentEventsPath, --heartbeat-s,
//   --hang-after-s, the live watch's flags (live_watch_flags), --io-stall-after-s when the
//   request bounds saves, and the task's place outright (--node-rank $(ORCH_NODE_RANK) from the
//   completion index on a gang, 0 alone; --nnodes, --tasks-per-node 1, --local-rank 0,
//   --master-addr, --master-port), then `--` and the job's own words (its shell, or the
//   prelude of its code and setup). $(ORCH_NODE_RANK) is the one reference the kubelet expands;
//   every other '$' is doubled (escape_kube_references).
// - env ORCH_NODE_NAME from the downward API (spec.nodeName): the node the agent names in its
//   records.
// - With a PushLaunch (kube_manifest.h): ORCH_PUSH_URL and ORCH_PUSH_CA as values,
//   ORCH_PUSH_CREDENTIAL as a secretKeyRef into the attempt's Secret (key kPushCredentialKey),
//   which the plan then makes even for a job without secret_env.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/cluster_port.h"
#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::kube {

struct PushLaunch;

inline constexpr std::string_view kAgentVolume = "orchestrate-agent";
inline constexpr std::string_view kAgentMountPath = "/orchestrate/agent";
inline constexpr std::string_view kAgentInitContainer = "install-agent";
inline constexpr std::string_view kAgentPath = "/orchestrate/agent/orchestrate-agent";
// The task's event file, in the agent's emptyDir (one task per pod).
inline constexpr std::string_view kAgentEventsPath = "/orchestrate/agent/events.jsonl";
// Where the agent is in the agent image.
inline constexpr std::string_view kAgentInImage = "/orchestrate-agent";
inline constexpr std::string_view kPushCredentialKey = "ORCH_PUSH_CREDENTIAL";

// Whether pods of this cluster run the agent (agent_image is not "none").
bool agent_in_pods(const KubernetesSpec& k);

// ErrorKind::invalid naming the cluster and the key: an agent image that is empty or has blanks
// or control characters.
Result<void> check_agent_image(const ClusterSpec& cluster);

// ErrorKind::invalid naming the cluster: a push URL that is not https://HOST[:PORT], an empty
// credential, a NUL byte or invalid UTF-8 in the CA.
Result<void> check_push(const PushLaunch& push, const ClusterSpec& cluster);

// The job container's command: the agent's `run` and its flags, "--", then `job_argv` (the
// words as the process gets them), each word escaped for the kubelet. `rendezvous`: index 0's
// DNS name on a gang, "" for a pod alone.
nlohmann::ordered_json agent_command(const LaunchRequest& request, const ClusterSpec& cluster,
                                     const std::string& rendezvous,
                                     const std::vector<std::string>& job_argv);

// The init container, the volume and the job container's mount into `pod_spec` and
// `container`. ErrorKind::invalid when the pod already has a volume named kAgentVolume or the
// container a mount at kAgentMountPath.
Result<void> add_agent(const KubernetesSpec& k, nlohmann::ordered_json& container,
                       nlohmann::ordered_json& pod_spec);

// The env entries the agent adds to the job's container (ORCH_NODE_NAME; with `push`, the three
// push variables), replacing entries of the same names in `env`. `secret_values` gets the
// credential when there is a push (under kPushCredentialKey); `secret_name` is the attempt's
// Secret.
void add_agent_env(const PushLaunch* push, const std::string& secret_name,
                   nlohmann::ordered_json& env, std::map<std::string, std::string>& secret_values);

}  // namespace orch::kube
