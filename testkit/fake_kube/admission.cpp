#include "testkit/fake_kube/admission.h"

#include <algorithm>
#include <atomic>

#include "testkit/fake_kube/kube_json.h"
#include "testkit/fake_kube/secrets.h"

namespace orch::fake_kube {
namespace {

using json = nlohmann::json;

std::string name_of(const json& o) {
  return string_at(o, {"metadata", "name"});
}

[[noreturn]] void invalid(const json& job, const std::string& field, const std::string& what) {
  ApiError error(422, "Invalid",
                 "Job.batch \"" + name_of(job) + "\" is invalid: " + field + ": " + what);
  error.details = {
      {"name", name_of(job)},
      {"group", "batch"},
      {"kind", "Job"},
      {"causes",
       json::array({{{"reason", "FieldValueInvalid"}, {"message", what}, {"field", field}}})}};
  throw error;
}

void set_default(json& obj, const char* key, const json& value) {
  if (!obj.contains(key) || obj[key].is_null()) obj[key] = value;
}

void check_name(const ResourceInfo& info, const json& object) {
  const std::string name = string_at(object, {"metadata", "name"});
  if (name.empty()) return;  // generateName
  const bool label = info.plural == "services" || info.plural == "namespaces";
  bool ok = name.size() <= (label ? 63u : 253u);
  for (std::size_t i = 0; i < name.size() && ok; ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    const bool edge = i == 0 || i + 1 == name.size();
    ok = alnum || (!edge && (c == '-' || (c == '.' && !label)));
  }
  if (!ok) {
    ApiError e(422, "Invalid",
               kind_for_messages(info) + " \"" + name +
                   "\" is invalid: metadata.name: Invalid "
                   "value: \"" +
                   name + "\": a lowercase RFC 1123 " + (label ? "label" : "subdomain") +
                   " must consist of lower case alphanumeric characters, '-'" +
                   (label ? "" : " or '.'") +
                   ", and must start and end with an alphanumeric character");
    e.details = {{"name", name}, {"group", info.group}, {"kind", info.kind}};
    throw e;
  }
}

void admit_service(json& svc) {
  json& spec = svc["spec"];
  if (!spec.is_object()) spec = json::object();
  if (!spec.contains("type")) spec["type"] = "ClusterIP";
  if (string_at(spec, {"clusterIP"}) != "None") {
    static std::atomic<int> next{10};
    const int n = next++;
    spec["clusterIP"] =
        "10.96." + std::to_string(n / 250 % 250) + "." + std::to_string(n % 250 + 1);
  }
  spec["clusterIPs"] = json::array({spec["clusterIP"]});
  spec["ipFamilies"] = json::array({"IPv4"});
  spec["ipFamilyPolicy"] = "SingleStack";
  spec["sessionAffinity"] = string_at(spec, {"sessionAffinity"}, "None");
  if (spec.contains("ports") && spec["ports"].is_array()) {
    for (json& p : spec["ports"]) {
      if (!p.contains("protocol")) p["protocol"] = "TCP";
      if (!p.contains("targetPort") && p.contains("port")) p["targetPort"] = p["port"];
    }
  }
  svc["status"] = {{"loadBalancer", json::object()}};
}

void admit_namespace(json& ns) {
  const std::string name = string_at(ns, {"metadata", "name"});
  ns["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
  ns["spec"] = {{"finalizers", json::array({"kubernetes"})}};
  ns["status"] = {{"phase", "Active"}};
}

// A PersistentVolumeClaim (issue 44, read by `cluster check`): access modes and a storage
// request required, as the real validation words it; Bound at once (there is no provisioner),
// its status repeating the modes and the request.
void admit_claim(json& pvc) {
  const std::string name = string_at(pvc, {"metadata", "name"});
  const auto refuse = [&](const std::string& field, const std::string& what) {
    ApiError e(422, "Invalid",
               "PersistentVolumeClaim \"" + name + "\" is invalid: " + field + ": " + what);
    e.details = {{"name", name}, {"group", ""}, {"kind", "PersistentVolumeClaim"}};
    throw e;
  };
  const json modes = at_path(pvc, {"spec", "accessModes"});
  if (!modes.is_array() || modes.empty()) {
    refuse("spec.accessModes", "Required value: at least 1 access mode is required");
  }
  for (const json& m : modes) {
    const std::string mode = m.is_string() ? m.get<std::string>() : m.dump();
    if (mode != "ReadWriteOnce" && mode != "ReadOnlyMany" && mode != "ReadWriteMany" &&
        mode != "ReadWriteOncePod") {
      refuse("spec.accessModes", "Unsupported value: \"" + mode +
                                     "\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", "
                                     "\"ReadWriteOnce\", \"ReadWriteOncePod\"");
    }
  }
  const json storage = at_path(pvc, {"spec", "resources", "requests", "storage"});
  if (!storage.is_string() || storage.get<std::string>().empty()) {
    refuse("spec.resources[storage]", "Required value");
  }
  pvc["spec"]["volumeMode"] = string_at(pvc, {"spec", "volumeMode"}, "Filesystem");
  pvc["status"] = {
      {"phase", "Bound"}, {"accessModes", modes}, {"capacity", {{"storage", storage}}}};
}

}  // namespace

std::string kind_for_messages(const ResourceInfo& info) {
  return info.group.empty() ? info.kind : info.kind + "." + info.group;
}

void admit_job(json& job) {
  json& meta = job["metadata"];
  if (string_at(meta, {"name"}).empty()) {
    const std::string prefix = string_at(meta, {"generateName"});
    if (prefix.empty())
      invalid(job, "metadata.name", "Required value: name or generateName is required");
    meta["name"] = prefix + random_suffix();
  }
  if (!job["spec"].is_object()) invalid(job, "spec", "Required value");
  json& spec = job["spec"];
  json& tmpl = spec["template"];
  const json& containers = at_path(tmpl, {"spec", "containers"});
  if (!containers.is_array() || containers.empty()) {
    invalid(job, "spec.template.spec.containers", "Required value");
  }
  for (std::size_t i = 0; i < containers.size(); ++i) {
    const std::string field = "spec.template.spec.containers[" + std::to_string(i) + "]";
    if (string_at(containers[i], {"name"}).empty()) invalid(job, field + ".name", "Required value");
    if (string_at(containers[i], {"image"}).empty()) {
      invalid(job, field + ".image", "Required value");
    }
  }
  const std::string restart = string_at(tmpl, {"spec", "restartPolicy"}, "Always");
  if (restart != "Never" && restart != "OnFailure") {
    invalid(job, "spec.template.spec.restartPolicy",
            "Unsupported value: \"" + restart + "\": supported values: \"OnFailure\", \"Never\"");
  }
  set_default(spec, "parallelism", 1);
  set_default(spec, "completions", 1);
  set_default(spec, "backoffLimit", 6);
  set_default(spec, "completionMode", "NonIndexed");
  set_default(spec, "suspend", false);
  set_default(spec, "podReplacementPolicy", "TerminatingOrFailed");
  const std::string completion_mode = string_at(spec, {"completionMode"});
  if (completion_mode != "NonIndexed" && completion_mode != "Indexed") {
    invalid(job, "spec.completionMode",
            "Unsupported value: \"" + completion_mode +
                "\": supported values: \"NonIndexed\", \"Indexed\"");
  }
  if (string_at(meta, {"uid"}).empty()) meta["uid"] = new_uid();
  const std::string uid = meta["uid"].get<std::string>();
  const std::string name = meta["name"].get<std::string>();
  spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
  json& labels = tmpl["metadata"]["labels"];
  if (!labels.is_object()) labels = json::object();
  labels["batch.kubernetes.io/controller-uid"] = uid;
  labels["batch.kubernetes.io/job-name"] = name;
  labels["controller-uid"] = uid;
  labels["job-name"] = name;
  meta["generation"] = 1;
  job["status"] = json::object();
}

void admit_pod(json& pod) {
  json& spec = pod["spec"];
  const json& containers = at_path(spec, {"containers"});
  if (!containers.is_array() || containers.empty()) {
    throw ApiError(422, "Invalid",
                   "Pod \"" + name_of(pod) + "\" is invalid: spec.containers: Required value");
  }
  set_default(spec, "restartPolicy", "Always");
  set_default(spec, "terminationGracePeriodSeconds", 30);
  set_default(spec, "schedulerName", "default-scheduler");
  set_default(spec, "dnsPolicy", "ClusterFirst");
  json& tolerations = spec["tolerations"];
  if (!tolerations.is_array()) tolerations = json::array();
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    const bool has = std::any_of(tolerations.begin(), tolerations.end(),
                                 [&](const json& t) { return string_at(t, {"key"}) == key; });
    if (!has) {
      tolerations.push_back({{"key", key},
                             {"operator", "Exists"},
                             {"effect", "NoExecute"},
                             {"tolerationSeconds", 300}});
    }
  }
  bool has_resources = false;
  for (const json& c : containers) has_resources |= !at_path(c, {"resources"}).empty();
  pod["status"] = {{"phase", "Pending"}, {"qosClass", has_resources ? "Burstable" : "BestEffort"}};
}

void admit(const ResourceInfo& info, json& object) {
  check_name(info, object);
  if (info.plural == "jobs") admit_job(object);
  if (info.plural == "pods") admit_pod(object);
  if (info.plural == "services") admit_service(object);
  if (info.plural == "namespaces") admit_namespace(object);
  if (info.plural == "secrets") admit_secret(object);
  if (info.plural == "persistentvolumeclaims") admit_claim(object);
}

}  // namespace orch::fake_kube
