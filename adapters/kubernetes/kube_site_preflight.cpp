// KubernetesSite::preflight (`orchestrate cluster check`, scheduler/model/preflight.h): the API
// server takes the credentials, the namespace exists, RBAC allows every verb this adapter uses
// (one SelfSubjectAccessReview each), the helper pods have an image, and the checkpoint root is
// on a shared volume the storage helper mounts (a warning otherwise).

#include <algorithm>
#include <iterator>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/kubernetes/kube_site.h"

namespace orch {
namespace {

using json = nlohmann::json;

// What this adapter asks the API server for: (verb, group, resource), namespaced but nodes.
struct Access {
  const char* verb;
  const char* group;
  const char* resource;
};
constexpr Access kAccesses[] = {
    {"list", "", "nodes"},      {"get", "", "pods"},         {"list", "", "pods"},
    {"watch", "", "pods"},      {"create", "", "pods"},      {"delete", "", "pods"},
    {"get", "", "pods/log"},    {"create", "", "pods/exec"}, {"create", "batch", "jobs"},
    {"get", "batch", "jobs"},   {"list", "batch", "jobs"},   {"delete", "batch", "jobs"},
    {"create", "", "services"}, {"delete", "", "services"},  {"create", "", "secrets"},
    {"patch", "", "secrets"},   {"delete", "", "secrets"},
};

// What this cluster's settings make the adapter ask for too: the checkpoint claims' access
// modes (cluster check, get persistentvolumeclaims) where a volume is a claim, and the Job's
// Workload (list workloads.kueue.x-k8s.io) where Jobs go through Kueue.
std::vector<Access> accesses_for(const ClusterSpec& spec) {
  std::vector<Access> out(std::begin(kAccesses), std::end(kAccesses));
  for (const PodVolume& v : spec.kubernetes.pod.volumes) {
    if (!v.claim.empty()) {
      out.push_back({"get", "", "persistentvolumeclaims"});
      break;
    }
  }
  if (!spec.kubernetes.queue.empty()) out.push_back({"list", "kueue.x-k8s.io", "workloads"});
  return out;
}

std::string review_body(const Access& a, const std::string& ns) {
  const std::string resource = a.resource;
  const auto slash = resource.find('/');
  json attrs = {{"verb", a.verb}, {"group", a.group}, {"resource", resource.substr(0, slash)}};
  if (slash != std::string::npos) attrs["subresource"] = resource.substr(slash + 1);
  if (resource != "nodes") attrs["namespace"] = ns;
  return json{{"apiVersion", "authorization.k8s.io/v1"},
              {"kind", "SelfSubjectAccessReview"},
              {"spec", {{"resourceAttributes", attrs}}}}
      .dump();
}

std::string status_words(const Result<KubeResponse>& r) {
  if (!r) return r.error().message;
  return "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200);
}

constexpr const char* kVolumeCheck = "checkpoint-volume";

// A warning: the check passes (the cluster takes jobs) and says what to fix.
PreflightCheck warned(const std::string& why) {
  return check_passed(kVolumeCheck, "warning: " + why);
}

// The volume whose mount holds `path` in the helper (and every job's pod): the deepest one.
const PodVolume* volume_holding(const std::vector<PodVolume>& volumes, const std::string& path) {
  const PodVolume* best = nullptr;
  for (const PodVolume& v : volumes) {
    const bool holds =
        !v.mount.empty() && (path == v.mount || v.mount == "/" || path.starts_with(v.mount + "/"));
    if (holds && (best == nullptr || v.mount.size() > best->mount.size())) best = &v;
  }
  return best;
}

// The access modes of a claim as the API shows it (the bound volume's, else the requested).
std::vector<std::string> access_modes(const std::string& body) {
  const json pvc = json::parse(body, nullptr, false);
  std::vector<std::string> out;
  for (const char* part : {"status", "spec"}) {
    if (!pvc.is_object() || !pvc.contains(part) || !pvc[part].is_object()) continue;
    const json& modes = pvc[part].value("accessModes", json::array());
    for (const json& m : modes.is_array() ? modes : json::array()) {
      if (m.is_string()) out.push_back(m.get<std::string>());
    }
    if (!out.empty()) break;
  }
  return out;
}

// Issue 44: the checkpoint root (storage.checkpoints, else <storage.root>/checkpoints) lies on
// a volume the storage helper mounts, writable, shared by all nodes: a ReadWriteMany claim.
PreflightCheck checkpoint_volume_check(const ClusterSpec& spec, const std::string& ns,
                                       KubeClient& client) {
  if (spec.checkpoint_root.empty() && spec.storage_root.empty()) {
    return warned(
        "neither storage.checkpoints nor storage.root is set: the checkpoints of jobs "
        "here cannot be listed, verified, copied or deleted; set storage.checkpoints to "
        "a directory on one of kubernetes.volumes (a ReadWriteMany claim)");
  }
  const std::string root = spec.checkpoints_dir();
  const PodVolume* v = volume_holding(spec.kubernetes.pod.volumes, root);
  if (v == nullptr) {
    std::string mounts;
    for (const PodVolume& m : spec.kubernetes.pod.volumes) {
      mounts += (mounts.empty() ? "" : ", ") + m.mount;
    }
    return warned(root +
                  " is on none of the volumes the storage helper mounts (kubernetes."
                  "volumes: " +
                  (mounts.empty() ? std::string("none") : mounts) +
                  "): its checkpoints cannot be listed, verified, copied or deleted; mount a "
                  "ReadWriteMany claim at or above it, or fix storage.checkpoints");
  }
  const std::string on = root + " is on volume " + v->name;
  if (v->read_only) return warned(on + ", mounted read-only: jobs cannot save there");
  if (!v->host_path.empty()) {
    return warned(on + ", host_path " + v->host_path +
                  ": each node has its own, so the storage helper does not see what jobs saved "
                  "on other nodes; use a ReadWriteMany claim");
  }
  const std::string path = "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + v->claim;
  auto r = client.request("GET", path);
  if (r && r->status == 404) {
    return warned("claim " + v->claim + " is not in namespace " + ns + " (" + on +
                  "): pods that mount it stay Pending; create it (ReadWriteMany) or fix "
                  "kubernetes.volumes");
  }
  if (!r || r->status != 200) {
    return check_passed(kVolumeCheck, on + " (claim " + v->claim +
                                          "); its access mode was not "
                                          "checked: GET " +
                                          path + " answered " +
                                          (r ? std::to_string(r->status) : r.error().message) +
                                          " (these credentials need get persistentvolumeclaims)");
  }
  const auto modes = access_modes(r->body);
  const auto has = [&](const char* m) {
    return std::find(modes.begin(), modes.end(), m) != modes.end();
  };
  std::string listed;
  for (const auto& m : modes) listed += (listed.empty() ? "" : ", ") + m;
  if (has("ReadWriteMany")) {
    return check_passed(kVolumeCheck,
                        root + " is on claim " + v->claim + " (ReadWriteMany), volume " + v->name);
  }
  if (has("ReadWriteOnce") || has("ReadWriteOncePod")) {
    return warned(root + " is on claim " + v->claim + ", which is " + listed +
                  ": only pods on one node can mount it, so the storage helper and jobs on other "
                  "nodes wait for it (Multi-Attach error); use a ReadWriteMany storage class");
  }
  return warned(root + " is on claim " + v->claim + ", which is " +
                (listed.empty() ? std::string("of no access mode") : listed) +
                ": jobs cannot save there; use a ReadWriteMany claim");
}

}  // namespace

std::vector<PreflightCheck> KubernetesSite::preflight() {
  std::vector<PreflightCheck> out;
  auto api = client_->request("GET", "/api");
  if (!api || api->status == 401 || api->status >= 500) {
    out.push_back(check_failed("auth", "the API server did not take the credentials (" +
                                           status_words(api) +
                                           "): fix kubernetes.kubeconfig and context"));
    for (const char* name : {"namespace", "rbac"}) out.push_back(check_skipped(name, "auth"));
  } else {
    out.push_back(check_passed("auth", "the API server takes the credentials"));
    out.push_back(namespace_check());
    out.push_back(rbac_check());
  }
  const std::string image = !spec_.kubernetes.helper_image.empty() ? spec_.kubernetes.helper_image
                                                                   : spec_.kubernetes.pod.image;
  out.push_back(image.empty() ? check_failed("helper-image",
                                             "neither kubernetes.helper_image nor pod.image is "
                                             "set: storage and probes need an image")
                              : check_passed("helper-image", image));
  out.push_back(checkpoint_volume_check(spec_, namespace_, *client_));
  return out;
}

PreflightCheck KubernetesSite::namespace_check() {
  auto r = client_->request("GET", "/api/v1/namespaces/" + namespace_);
  if (r && r->status == 200) return check_passed("namespace", namespace_ + " exists");
  if (r && r->status == 403) {
    return check_passed("namespace", "not checked: these credentials may not read namespace " +
                                         namespace_ + " itself (the RBAC check says more)");
  }
  return check_failed("namespace", "namespace " + namespace_ + " is not there (" + status_words(r) +
                                       "): fix kubernetes.namespace");
}

PreflightCheck KubernetesSite::rbac_check() {
  std::string denied;
  for (const Access& a : accesses_for(spec_)) {
    auto r = client_->request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                              review_body(a, namespace_));
    const json answer = r && r->status / 100 == 2 ? json::parse(r->body, nullptr, false) : json();
    const bool allowed = answer.is_object() && answer.contains("status") &&
                         answer["status"].is_object() && answer["status"].value("allowed", false);
    if (!r || r->status / 100 != 2) {
      return check_failed("rbac",
                          "cannot ask the API server what is allowed (" + status_words(r) + ")");
    }
    if (!allowed) denied += std::string(denied.empty() ? "" : ", ") + a.verb + " " + a.resource;
  }
  if (denied.empty()) return check_passed("rbac", "every verb orchestrate uses is allowed");
  return check_failed("rbac", "the credentials may not " + denied + " in namespace " + namespace_ +
                                  ": grant them in the service account's Role");
}

}  // namespace orch
