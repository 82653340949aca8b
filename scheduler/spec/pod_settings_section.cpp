#include "scheduler/spec/pod_settings_section.h"

#include <string>

#include "scheduler/common/dns_name.h"

namespace orch {
namespace {

using yaml::MapView;

// A label key or resource name: [prefix/]name, name 1-63 of alphanumerics, '-', '_', '.'
// starting and ending alphanumeric; prefix a DNS subdomain.
bool is_qualified_name(std::string_view s) {
  const auto slash = s.find('/');
  std::string_view name = s;
  if (slash != std::string_view::npos) {
    if (!is_dns_subdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  if (name.empty() || name.size() > 63) return false;
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool is_absolute_path(std::string_view s) {
  return !s.empty() && s.front() == '/' && s.find('\0') == std::string_view::npos &&
         s.find("/../") == std::string_view::npos && !s.ends_with("/..");
}

bool is_image(std::string_view s) {
  if (s.empty() || s.size() > 512) return false;
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  }
  return true;
}

constexpr yaml::StringRule kDnsLabel{is_dns_label,
                                     "a DNS-1123 label (1 to 63 of a-z, 0-9 and \"-\")"};
constexpr yaml::StringRule kDnsSubdomain{is_dns_subdomain, "a DNS-1123 name such as high-priority"};
constexpr yaml::StringRule kQualified{is_qualified_name,
                                      "a Kubernetes name such as nvidia.com/gpu or rdma/ib"};
constexpr yaml::StringRule kQuantity{is_kube_quantity, "a quantity such as 64Gi or 1"};
constexpr yaml::StringRule kPath{is_absolute_path, "an absolute path without \"..\""};
constexpr yaml::StringRule kImage{is_image, "a container image without blanks"};

void read_tolerations(MapView& section, std::vector<PodToleration>& out) {
  const yaml::Field* field = section.find("tolerations");
  if (field == nullptr) return;
  yaml::Reader& r = section.reader();
  constexpr std::string_view kShape =
      "a list such as [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]";
  if (!field->value.IsSequence()) {
    r.fail(section.value_position("tolerations"), "\"tolerations\" must be a list", kShape);
    return;
  }
  for (std::size_t i = 0; i < field->value.size() && !r.failed(); ++i) {
    MapView item(r, field->value[i], "tolerations[" + std::to_string(i) + "]",
                 {"key", "operator", "value", "effect"}, kShape);
    if (r.failed()) return;
    PodToleration t;
    item.read_string("key", t.key, kQualified, "a taint key such as nvidia.com/gpu");
    item.read_string(
        "operator", t.op,
        {[](std::string_view s) { return s == "Exists" || s == "Equal"; }, "Exists or Equal"},
        "Exists or Equal");
    item.read_string("value", t.value, yaml::kAnyString, "the taint's value");
    item.read_string("effect", t.effect,
                     {[](std::string_view s) {
                        return s == "NoSchedule" || s == "PreferNoSchedule" || s == "NoExecute";
                      },
                      "NoSchedule, PreferNoSchedule or NoExecute"},
                     "NoSchedule, PreferNoSchedule or NoExecute");
    if (r.failed()) return;
    if (t.op == "Exists" && !t.value.empty()) {
      r.fail(item.value_position("value"),
             "tolerations[" + std::to_string(i) + "] has operator Exists and a value",
             "no value with Exists, or operator: Equal");
      return;
    }
    if (t.key.empty() && t.op != "Exists") {
      r.fail(item.position(), "tolerations[" + std::to_string(i) + "] has no key",
             "a key, or operator: Exists to tolerate every taint");
      return;
    }
    out.push_back(std::move(t));
  }
}

void read_volumes(MapView& section, std::vector<PodVolume>& out) {
  const yaml::Field* field = section.find("volumes");
  if (field == nullptr) return;
  yaml::Reader& r = section.reader();
  constexpr std::string_view kShape =
      "a list such as [{name: ckpt, claim: training-ckpt, mount: /ckpt}]";
  if (!field->value.IsSequence()) {
    r.fail(section.value_position("volumes"), "\"volumes\" must be a list", kShape);
    return;
  }
  for (std::size_t i = 0; i < field->value.size() && !r.failed(); ++i) {
    const std::string where = "volumes[" + std::to_string(i) + "]";
    MapView item(r, field->value[i], where, {"name", "claim", "host_path", "mount", "read_only"},
                 kShape);
    if (r.failed()) return;
    PodVolume v;
    item.require("name", "a volume name such as ckpt");
    item.require("mount", "where the container sees it, such as /ckpt");
    item.read_string("name", v.name, kDnsLabel, "a volume name such as ckpt");
    item.read_string("claim", v.claim, kDnsSubdomain, "a PersistentVolumeClaim's name");
    item.read_string("host_path", v.host_path, kPath, "a directory of the node such as /mnt/data");
    item.read_string("mount", v.mount, kPath, "an absolute path such as /ckpt");
    item.read_bool("read_only", v.read_only, "true or false");
    if (r.failed()) return;
    if (v.claim.empty() == v.host_path.empty()) {
      r.fail(item.position(), where + " must give exactly one of \"claim\" and \"host_path\"",
             "claim: <PersistentVolumeClaim> or host_path: /dir");
      return;
    }
    for (const auto& other : out) {
      if (other.name == v.name || other.mount == v.mount) {
        r.fail(item.position(),
               where + " repeats the " +
                   (other.name == v.name ? "name " + v.name : "mount " + v.mount),
               "one volume per name and per mount path");
        return;
      }
    }
    if (v.mount == "/dev/shm") {
      r.fail(item.value_position("mount"), where + " mounts /dev/shm",
             "shm_size: 64Gi for shared memory");
      return;
    }
    out.push_back(std::move(v));
  }
}

// A label value: empty, or at most 63 of [A-Za-z0-9._-] starting and ending alphanumeric.
bool is_label_value(std::string_view s) {
  if (s.empty()) return true;
  return is_qualified_name(s) && s.find('/') == std::string_view::npos;
}

// Keys orchestrate writes itself: a job's or cluster's label or annotation may not take them.
bool is_reserved_key(std::string_view key) {
  return key.starts_with("orchestrate.dev/") || key == "app.kubernetes.io/managed-by" ||
         key.starts_with("batch.kubernetes.io/") || key == "job-name" || key == "controller-uid";
}

constexpr std::size_t kMaxAnnotationBytes = 256 * 1024;  // Kubernetes' total for a pod

// `labels:` or `annotations:` (`what`), keys and values checked as Kubernetes does.
void read_metadata_map(MapView& section, std::string_view what,
                       std::map<std::string, std::string>& out) {
  constexpr std::string_view kHow =
      "a key such as example.com/team: [prefix/]name, the name 1 to 63 of letters, digits, "
      "\"-\", \"_\" and \".\" starting and ending with a letter or digit";
  section.read_string_map(what, out, {is_qualified_name, kHow},
                          what == "labels" ? "a map such as {team: research}"
                                           : "a map such as {example.com/network: rdma}");
  yaml::Reader& r = section.reader();
  std::size_t bytes = 0;
  for (const auto& [key, value] : out) {
    const std::string where = std::string(what) + "." + key;
    if (r.failed()) return;
    if (is_reserved_key(key)) {
      r.fail(section.value_position(what), where + " is orchestrate's own (or the Job's)",
             "another key: orchestrate.dev/, app.kubernetes.io/managed-by and the Job "
             "controller's keys are set by orchestrate and Kubernetes");
      return;
    }
    if (what == "labels" && !is_label_value(value)) {
      r.fail(section.value_position(what), where + " is \"" + value + "\", not a label value",
             "at most 63 of letters, digits, \"-\", \"_\" and \".\", starting and ending with "
             "a letter or digit (or empty)");
      return;
    }
    bytes += key.size() + value.size();
  }
  if (bytes > kMaxAnnotationBytes) {
    r.fail(section.value_position(what),
           std::string(what) + " are " + std::to_string(bytes) + " bytes",
           "at most 256 KiB of keys and values, Kubernetes' limit");
  }
}

// A Linux capability as Kubernetes names it: IPC_LOCK, SYS_RESOURCE (no CAP_ prefix).
bool is_capability(std::string_view s) {
  if (s.empty() || s.size() > 64 || s.starts_with("CAP_") || s.front() < 'A' || s.front() > 'Z') {
    return false;
  }
  for (char c : s) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

void read_security(MapView& section, PodSecurity& out) {
  if (section.has("host_network")) {
    bool host = false;
    section.read_bool("host_network", host, "true or false");
    out.host_network = host;
  }
  if (!section.has("security_context")) return;
  MapView sc = section.child("security_context", "security_context",
                             {"capabilities", "privileged", "run_as_user", "run_as_group"},
                             "a map such as {capabilities: {add: [IPC_LOCK]}, run_as_user: 1000}");
  if (section.reader().failed()) return;
  if (sc.has("capabilities")) {
    MapView caps = sc.child("capabilities", "security_context.capabilities", {"add"},
                            "a map such as {add: [IPC_LOCK]}");
    caps.read_string_list("add", out.capabilities_add,
                          {is_capability, "a capability such as IPC_LOCK (no CAP_ prefix)"},
                          "a list such as [IPC_LOCK, SYS_RESOURCE]");
  }
  if (sc.has("privileged")) {
    bool privileged = false;
    sc.read_bool("privileged", privileged, "true or false");
    out.privileged = privileged;
  }
  for (const char* key : {"run_as_user", "run_as_group"}) {
    std::optional<int> id;
    sc.read_int(key, id, 0, 2147483647, "a numeric id such as 1000");
    if (!id) continue;
    (std::string_view(key) == "run_as_user" ? out.run_as_user : out.run_as_group) = *id;
  }
}

}  // namespace

bool is_label_key(std::string_view s) {
  return is_qualified_name(s);
}

bool is_kube_quantity(std::string_view s) {
  std::size_t i = 0;
  std::size_t digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return false;
  const std::string_view suffix = s.substr(i);
  for (std::string_view ok :
       {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "k", "M", "G", "T", "P", "E"}) {
    if (suffix == ok) return true;
  }
  return false;
}

std::vector<std::string_view> pod_setting_keys() {
  return {"image",       "image_pull_secrets", "service_account", "shm_size", "node_selector",
          "tolerations", "extra_resources",    "priority_class",  "volumes",  "annotations",
          "labels",      "security_context",   "host_network"};
}

void read_pod_settings(MapView& section, PodSettings& out) {
  section.read_string("image", out.image, kImage, "a container image");
  section.read_string_list("image_pull_secrets", out.image_pull_secrets, kDnsSubdomain,
                           "a list of Secret names such as [registry-cred]");
  section.read_string("service_account", out.service_account, kDnsSubdomain,
                      "a ServiceAccount name such as trainer");
  section.read_string("shm_size", out.shm_size, kQuantity, "a size such as 64Gi");
  section.read_string_map("node_selector", out.node_selector, kQualified,
                          "a map such as {cloud.google.com/gke-accelerator: nvidia-h100-80gb}");
  read_tolerations(section, out.tolerations);
  section.read_string_map("extra_resources", out.extra_resources, kQualified,
                          "a map such as {rdma/ib: 1}");
  for (const auto& [name, quantity] : out.extra_resources) {
    if (!is_kube_quantity(quantity)) {
      std::string what = "extra_resources." + name;
      what += " is \"" + quantity + "\", not a quantity";
      section.reader().fail(section.value_position("extra_resources"), what,
                            "a quantity such as 1 or 8");
      return;
    }
  }
  section.read_string("priority_class", out.priority_class, kDnsSubdomain,
                      "a PriorityClass name such as high-priority");
  read_volumes(section, out.volumes);
  read_metadata_map(section, "annotations", out.annotations);
  read_metadata_map(section, "labels", out.labels);
  read_security(section, out.security);
}

}  // namespace orch
