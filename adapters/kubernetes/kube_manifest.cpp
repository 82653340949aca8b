#include "adapters/kubernetes/kube_manifest.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/kubernetes/kube_agent_container.h"
#include "adapters/kubernetes/kube_pod_settings.h"
#include "adapters/kubernetes/kube_secret.h"
#include "scheduler/common/utf8.h"
#include "scheduler/model/checkpoint_dir.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/launch_contract.h"
#include "scheduler/model/launch_token.h"
#include "scheduler/model/workdir.h"

namespace orch::kube {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kMaxLabelValue = 63;
constexpr std::size_t kMaxAnnotationName = 256;  // bytes of the job's name kept
constexpr std::size_t kHashSuffix = 9;           // "-" and 8 hex digits

Error invalid(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_alnum(char c) {
  return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// A label value: empty, or up to 63 of [A-Za-z0-9._-] starting and ending alphanumeric.
bool is_label_value(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > kMaxLabelValue || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s) {
    if (!is_alnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// A value that becomes a string the process receives (argv element or env value).
Result<void> check_process_string(std::string_view value, const std::string& what) {
  if (value.find('\0') != std::string_view::npos) {
    return invalid(what + " contains a NUL byte, which no process can receive");
  }
  if (first_invalid_utf8(value)) {
    return invalid(what +
                   " is not valid UTF-8: the Kubernetes API carries text only, and would "
                   "replace the bytes");
  }
  return Ok{};
}

Result<void> check_token(const std::string& token) {
  if (!token.empty() && is_label_value(token)) return Ok{};
  return invalid("launch token '" + token +
                 "' cannot be a Kubernetes label value: use 1-63 characters from "
                 "[A-Za-z0-9._-], starting and ending with a letter or digit");
}

bool is_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!is_alnum(c) && c != '_') return false;
  }
  return true;
}

// "nvidia.com/gpu", "amd.com/gpu", "gpu": [prefix/]name, the name at most 63 characters of
// [A-Za-z0-9._-] starting and ending alphanumeric, the prefix a DNS subdomain.
bool is_resource_name(std::string_view s) {
  std::size_t slash = s.find('/');
  std::string_view name = slash == std::string_view::npos ? s : s.substr(slash + 1);
  if (slash != std::string_view::npos && !is_dns_subdomain(s.substr(0, slash))) return false;
  return !name.empty() && is_label_value(name);
}

// The job's pod settings, with its `container.image` (issue 40) as the pods' image when it has
// one: on Kubernetes a job's container is its pods'.
PodSettings job_pod_settings(const LaunchRequest& r) {
  PodSettings pod = r.pod;
  if (!r.container.empty()) pod.image = r.container.image;
  return pod;
}

// `what` names where the image comes from ("kubernetes.image of cluster 'k'").
Result<void> check_image(const std::string& image, const std::string& what) {
  bool ok = !image.empty();
  for (char c : image) ok = ok && !is_control(c) && c != ' ';
  if (ok) return Ok{};
  return invalid(what + " is '" + image +
                 "': give the container image the job runs in, such as "
                 "nvcr.io/nvidia/pytorch:24.05-py3 (no blanks or control characters)");
}

std::uint32_t fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

std::string hex8(std::uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kDigits[v & 0xFu];
    v >>= 4u;
  }
  return out;
}

void trim_dashes(std::string& s) {
  while (!s.empty() && s.back() == '-') s.pop_back();
  std::size_t lead = 0;
  while (lead < s.size() && s[lead] == '-') ++lead;
  s.erase(0, lead);
}

// The job's display name as an annotation: control characters as '?', at most 256 bytes cut
// at a UTF-8 boundary, invalid UTF-8 as '?'.
std::string annotation_text(const std::string& name) {
  std::string out;
  std::size_t i = 0;
  while (i < name.size()) {
    auto c = static_cast<unsigned char>(name[i]);
    std::size_t len = 1;
    std::string piece(1, is_control(name[i]) ? '?' : name[i]);
    if (c >= 0x80) {
      len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      std::string_view seq = std::string_view(name).substr(i, len);
      if (seq.size() == len && !first_invalid_utf8(seq)) {
        piece = seq;
      } else {
        piece = "?";
        len = 1;
      }
    }
    if (out.size() + piece.size() > kMaxAnnotationName) break;
    out += piece;
    i += len;
  }
  return out;
}

Json labels_of(const LaunchRequest& r) {
  Json labels = Json::object();
  labels[std::string(kTokenLabel)] = r.token;
  labels[std::string(kJobIdLabel)] = std::to_string(r.job_id);
  labels[std::string(kAttemptLabel)] = std::to_string(r.attempt_no);
  labels["app.kubernetes.io/managed-by"] = "orchestrate";
  return labels;
}

// The launch contract's variables whose value is the pod's completion index (with one task per
// pod, its node rank is its task rank): the Job controller writes the index into this
// annotation of every pod it creates, and the downward API hands it to the container.
constexpr const char* kIndexRankVars[] = {"ORCH_NODE_RANK", "NODE_RANK", "ORCH_TASK_RANK", "RANK"};
const std::string kIndexFieldPath =
    "metadata.annotations['" + std::string(kCompletionIndexKey) + "']";

// A secret_env variable as the container gets it: by reference to the attempt's Secret, so that
// the value is nowhere in the Job object (kube_secret.h).
Result<Json> secret_ref(const std::string& name, const std::string& value,
                        const std::string& secret_name) {
  if (!is_env_name(name)) {
    return invalid("secret_env variable name '" + name +
                   "' is not usable: use letters, digits and '_', not starting with a digit");
  }
  // Any bytes but NUL reach the process (the Secret's data is base64): say which variable,
  // never what its value is.
  if (value.find('\0') != std::string::npos) {
    return invalid("secret_env variable " + name + " contains a NUL byte, which no process " +
                   "can receive");
  }
  return Json{{"name", name},
              {"valueFrom", {{"secretKeyRef", {{"name", secret_name}, {"key", name}}}}}};
}

// `secret_values`: set to the secrets the env refers to (those the contract does not override).
Result<Json> container_env(const LaunchRequest& r, const ClusterSpec& cluster,
                           const std::string& rendezvous, const std::string& secret_name,
                           std::map<std::string, std::string>& secret_values) {
  std::map<std::string, std::string> env = r.env;
  // A secret wins over a plain variable of the same name; its value is not in `env` at all.
  for (const auto& [k, v] : r.secret_env) env.erase(k);
  for (const auto& [k, v] : launch_token_env(r)) env[k] = v;
  env["ORCH_JOB_ID"] = std::to_string(r.job_id);
  env["ORCH_ATTEMPT"] = std::to_string(r.attempt_no);
  env["ORCH_GPUS"] = std::to_string(static_cast<std::int64_t>(r.nodes) * r.gpus_per_node);
  env["ORCH_SITE"] = cluster.name;
  if (!rendezvous.empty()) env["ORCH_RENDEZVOUS"] = rendezvous;
  // The job's code and setup (issue 40): what task_prelude reads.
  for (const auto& [k, v] : workdir_env(r, setup_failed_marker(cluster, r.token))) env[k] = v;
  // The launch contract (docs/launch-contract.md): one task per pod, the gang meeting at index
  // 0's DNS name (a pod alone at its own loopback).
  TaskPlace place;
  place.nnodes = r.nodes;
  place.master_addr = rendezvous.empty() ? "127.0.0.1" : rendezvous;
  place.master_port = master_port_for(r.token);
  const bool indexed = r.nodes > 1;
  for (const auto& [name, value] : task_env(place)) env[name] = value;
  // The secrets were taken out of `env` above, so a secret's name that is there now was set by
  // the launch contract, which wins over secrets as it does over env.
  std::set<std::string> contract_names;
  for (const auto& [name, value] : r.secret_env) {
    if (env.count(name) > 0) contract_names.insert(name);
  }
  if (indexed) {
    for (const char* name : kIndexRankVars) {
      env.erase(name);
      contract_names.insert(name);
    }
  }
  Json out = Json::array();
  if (indexed) {
    for (const char* name : kIndexRankVars) {
      out.push_back(Json{
          {"name", name},
          {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", kIndexFieldPath}}}}}});
    }
  }
  // In name order, plain values and secret references alike.
  std::map<std::string, Json> entries;
  for (const auto& [name, value] : env) {
    if (!is_env_name(name)) {
      return invalid("environment variable name '" + name +
                     "' is not usable: use letters, digits and '_', not starting with a digit");
    }
    if (auto ok = check_process_string(value, "environment variable " + name); !ok) {
      return ok.error();
    }
    entries[name] = Json{{"name", name}, {"value", escape_kube_references(value)}};
  }
  for (const auto& [name, value] : r.secret_env) {
    if (contract_names.count(name) > 0) continue;  // the launch contract wins, as over env
    auto ref = secret_ref(name, value, secret_name);
    if (!ref) return ref.error();
    entries[name] = std::move(*ref);
    secret_values[name] = value;
  }
  for (auto& [name, entry] : entries) out.push_back(std::move(entry));
  return out;
}

Result<void> check_exclude(const std::vector<std::string>& nodes) {
  for (const auto& n : nodes) {
    if (!is_dns_subdomain(n)) {
      return invalid("excluded node name '" + n +
                     "' is not a Kubernetes node name (a DNS-1123 subdomain: lower-case "
                     "letters, digits, '-' and '.')");
    }
  }
  return Ok{};
}

// requiredDuringSchedulingIgnoredDuringExecution with one term excluding every node.
Json exclude_affinity(const std::vector<std::string>& nodes) {
  std::set<std::string> unique(nodes.begin(), nodes.end());
  Json hostnames = Json::array();
  Json fields = Json::array();
  for (const auto& n : unique) {
    if (is_label_value(n)) hostnames.push_back(n);
    fields.push_back(Json{{"key", "metadata.name"}, {"operator", "NotIn"}, {"values", {n}}});
  }
  Json term = Json::object();
  if (!hostnames.empty()) {
    term["matchExpressions"] = Json::array(
        {Json{{"key", "kubernetes.io/hostname"}, {"operator", "NotIn"}, {"values", hostnames}}});
  }
  term["matchFields"] = fields;
  return Json{{"nodeAffinity",
               {{"requiredDuringSchedulingIgnoredDuringExecution",
                 {{"nodeSelectorTerms", Json::array({term})}}}}}};
}

// No two pods of the attempt on one node: required anti-affinity on the token label, by
// hostname.
Json spread_affinity(const std::string& token) {
  return Json{
      {"requiredDuringSchedulingIgnoredDuringExecution",
       Json::array({Json{{"labelSelector", {{"matchLabels", {{std::string(kTokenLabel), token}}}}},
                         {"topologyKey", "kubernetes.io/hostname"}}})}};
}

Result<void> check_request(const LaunchRequest& r, const ClusterSpec& cluster,
                           const std::string& ns) {
  if (auto ok = check_token(r.token); !ok) return ok.error();
  if (!is_dns_label(ns)) {
    return invalid("Kubernetes namespace '" + ns + "' of cluster '" + cluster.name +
                   "' is not a DNS-1123 label (1-63 of [a-z0-9-])");
  }
  if (r.nodes < 1) {
    return invalid("a Kubernetes job needs at least one node, the request asks for " +
                   std::to_string(r.nodes));
  }
  if (r.tasks_per_node != 1) {
    return invalid("cluster '" + cluster.name + "': a Kubernetes job runs one task per pod, the " +
                   "request asks for tasks_per_node " + std::to_string(r.tasks_per_node) +
                   "; set tasks_per_node: 1 and start the node's processes in the pod " +
                   "(torchrun --nproc-per-node)");
  }
  if (r.gpus_per_node < 0) {
    return invalid("gpus_per_node is negative (" + std::to_string(r.gpus_per_node) + ")");
  }
  if (r.job_id < 0 || r.attempt_no < 0) {
    return invalid("job id and attempt number must not be negative (" + std::to_string(r.job_id) +
                   ", " + std::to_string(r.attempt_no) + ")");
  }
  if (!r.container.mounts.empty()) {
    return invalid("cluster '" + cluster.name +
                   "' is Kubernetes: it takes no container.mounts; mount volumes with the job's "
                   "kubernetes.volumes");
  }
  if (!r.container.empty()) {
    if (auto ok = check_image(r.container.image, "the job's container.image"); !ok) {
      return ok.error();
    }
  } else if (!r.pod.image.empty()) {
    if (auto ok = check_image(r.pod.image, "the job's kubernetes.image"); !ok) return ok.error();
  } else if (auto ok = check_image(cluster.kubernetes.pod.image,
                                   "kubernetes.image of cluster '" + cluster.name + "'");
             !ok) {
    return ok.error();
  }
  for (const auto& v : r.pod.volumes) {
    if (!v.host_path.empty() && !cluster.kubernetes.allow_host_path) {
      return invalid("cluster '" + cluster.name + "' does not let jobs mount node directories: " +
                     "the job's volume " + v.name + " is hostPath " + v.host_path +
                     "; use a PersistentVolumeClaim, or have the cluster set "
                     "kubernetes.allow_host_path: true");
    }
  }
  if (!is_resource_name(cluster.kubernetes.gpu_resource)) {
    return invalid("kubernetes.gpu_resource '" + cluster.kubernetes.gpu_resource +
                   "' of cluster '" + cluster.name +
                   "' is not a resource name such as nvidia.com/gpu");
  }
  if (cluster.kubernetes.termination_grace_s < 0) {
    return invalid("kubernetes.termination_grace_s of cluster '" + cluster.name + "' is negative");
  }
  if (auto ok = check_process_string(r.command, "the job's command"); !ok) return ok.error();
  return check_exclude(r.exclude_nodes);
}

// The Job around the pod spec: its labels and annotations on the pod template too; Indexed with
// the gang's size for a multi-node attempt; suspended for Kueue.
Json job_manifest(const KubeLaunchPlan& plan, const LaunchRequest& request, const KubernetesSpec& k,
                  const Json& labels, const Json& annotations, const Json& pod_spec) {
  const bool multi = request.nodes > 1;
  Json job_spec = {
      {"backoffLimit", 0},
      {"completions", request.nodes},
      {"parallelism", request.nodes},
  };
  Json job_labels = labels;
  if (!k.queue.empty()) {
    // Kueue admits the Job by unsuspending it once the queue's quota has room.
    job_spec["suspend"] = true;
    job_labels[std::string(kQueueLabel)] = k.queue;
  }
  if (multi) job_spec["completionMode"] = "Indexed";
  Json pod_annotations = annotations;
  if (multi) pod_annotations[std::string(kGangSizeAnnotation)] = std::to_string(request.nodes);
  if (request.heartbeat_s > 0 && request.heartbeat_timeout_s > 0) {
    pod_annotations[std::string(kHeartbeatTimeoutAnnotation)] =
        std::to_string(std::llround(request.heartbeat_timeout_s * 1000));
  }
  job_spec["template"] = {{"metadata", {{"labels", labels}, {"annotations", pod_annotations}}},
                          {"spec", pod_spec}};
  return Json{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", plan.job_name},
        {"namespace", plan.namespace_},
        {"labels", job_labels},
        {"annotations", annotations}}},
      {"spec", job_spec},
  };
}

// The headless Service of a multi-node attempt, as JSON.
std::string service_manifest(const KubeLaunchPlan& plan, const Json& labels,
                             const Json& annotations, const std::string& token) {
  Json service = {
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       {{"name", plan.service_name},
        {"namespace", plan.namespace_},
        {"labels", labels},
        {"annotations", annotations}}},
      {"spec",
       {{"clusterIP", "None"},
        {"selector", {{std::string(kTokenLabel), token}}},
        {"publishNotReadyAddresses", true}}},
  };
  return service.dump();
}

// The Secret of plan.secret_values (kube_secret.h), labelled like the Job.
void add_secret(KubeLaunchPlan& plan, const std::string& name, const Json& labels) {
  plan.secret_name = name;
  plan.secrets_path = secrets_path(plan.namespace_);
  plan.secret_path = plan.secrets_path + "/" + name;
  plan.secret_body = secret_manifest(
      name, plan.namespace_, labels.get<std::map<std::string, std::string>>(), plan.secret_values);
}

}  // namespace

std::string hash8(std::string_view s) {
  return hex8(fnv1a(s));
}

std::string job_name_for_token(const std::string& token) {
  if (token.size() <= kMaxJobName && is_dns_label(token)) return token;
  std::string name;
  for (char c : token) {
    char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    name += is_lower_alnum(lower) ? lower : '-';
  }
  trim_dashes(name);
  if (name.size() > kMaxJobName - kHashSuffix) name.resize(kMaxJobName - kHashSuffix);
  trim_dashes(name);
  if (name.empty()) name = "orch";
  return name + "-" + hash8(token);
}

Result<KubeLaunchPlan> make_launch_plan(const LaunchRequest& request, const ClusterSpec& cluster,
                                        const std::string& namespace_, const PushLaunch* push) {
  if (auto ok = check_request(request, cluster, namespace_); !ok) return ok.error();
  const KubernetesSpec& k = cluster.kubernetes;
  // The agent in the pod (kube_agent_container.h); pushing needs it.
  const bool agent = agent_in_pods(k);
  if (!agent) push = nullptr;
  if (auto ok = agent ? check_agent_image(cluster) : Result<void>(Ok{}); !ok) return ok.error();
  if (auto ok = push ? check_push(*push, cluster) : Result<void>(Ok{}); !ok) return ok.error();

  KubeLaunchPlan plan;
  plan.namespace_ = namespace_;
  plan.job_name = job_name_for_token(request.token);
  plan.jobs_path = jobs_path(namespace_);
  plan.job_path = plan.jobs_path + "/" + plan.job_name;
  plan.services_path = services_path(namespace_);
  plan.label_selector = token_label_selector(request.token);
  const bool multi = request.nodes > 1;
  std::string rendezvous;
  if (multi) {
    plan.service_name = service_name_for(plan.job_name);
    plan.service_path = plan.services_path + "/" + plan.service_name;
    rendezvous = plan.job_name + "-0." + plan.service_name;
  }

  const bool has_secret = !request.secret_env.empty() || push != nullptr;
  const std::string secret = has_secret ? secret_name_for(plan.job_name) : "";
  auto env = container_env(request, cluster, rendezvous, secret, plan.secret_values);
  if (!env) return env.error();
  if (agent) add_agent_env(push, secret, *env, plan.secret_values);

  const Json labels = labels_of(request);
  Json annotations = Json::object();
  if (!request.job_name.empty()) {
    annotations[std::string(kJobNameAnnotation)] = annotation_text(request.job_name);
  }

  if (auto ok = check_job_security(request.pod, cluster); !ok) return ok.error();
  const PodSettings pod = merge_pod_settings(k.pod, job_pod_settings(request));
  // The job's own checkpoint directory ($ORCH_CHECKPOINT_DIR) is made first, in its volume;
  // then the command, under the job's shell (`shell:`; bash where the image has it).
  // With code or setup (issue 40), task_prelude runs first: the code extracted, the setup run
  // once, into ORCH_WORKDIR, then `exec` the job's shell.
  std::vector<std::string> argv = job_shell_argv(
      request.shell, request.checkpoint_dir.empty()
                         ? request.command
                         : std::string(kMakeCheckpointDirCommand) + "\n" + request.command);
  if (std::string prelude = task_prelude(request); !prelude.empty()) {
    argv.insert(argv.begin(), {"/bin/sh", "-c", std::move(prelude), "orch-task"});
  }
  Json command = Json::array();
  if (agent) {
    command = agent_command(request, cluster, rendezvous, argv);
  } else {
    for (const auto& word : argv) command.push_back(escape_kube_references(word));
  }
  // The image comes with the rest of the pod settings (apply_pod_settings).
  Json container = {
      {"name", std::string(kContainerName)},
      {"command", std::move(command)},
      {"env", *env},
  };
  if (!request.container.workdir.empty()) container["workingDir"] = request.container.workdir;

  Json pod_spec = {
      {"restartPolicy", "Never"},
      {"terminationGracePeriodSeconds", k.termination_grace_s},
      {"enableServiceLinks", false},
      {"automountServiceAccountToken", false},
  };
  request_gpus(k.gpu_resource, request.gpus_per_node, container, pod_spec);
  if (auto ok = apply_pod_settings(pod, PodKind::job, container, pod_spec); !ok) return ok.error();
  if (auto ok = agent ? add_agent(k, container, pod_spec) : Result<void>(Ok{}); !ok) {
    return ok.error();
  }
  if (multi) pod_spec["subdomain"] = plan.service_name;
  Json affinity = Json::object();
  if (!request.exclude_nodes.empty()) affinity = exclude_affinity(request.exclude_nodes);
  // One pod of the gang per node, as one task per node is on the other providers.
  if (multi) affinity["podAntiAffinity"] = spread_affinity(request.token);
  if (!affinity.empty()) pod_spec["affinity"] = affinity;
  pod_spec["containers"] = Json::array({container});

  try {
    Json job = job_manifest(plan, request, k, labels, annotations, pod_spec);
    apply_pod_metadata(pod, request.topology, job["spec"]["template"]["metadata"]);
    plan.job_body = job.dump();
    if (!plan.secret_values.empty()) add_secret(plan, secret, labels);
    if (multi) plan.service_body = service_manifest(plan, labels, annotations, request.token);
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::internal,
                      std::string("cannot write the Job manifest: ") + e.what());
  }
  return plan;
}

}  // namespace orch::kube
