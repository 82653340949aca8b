#include "adapters/kubernetes/kube_status.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace orch::kube {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxQuoted = 200;
constexpr std::size_t kMaxWords = 1024;  // bytes of a Kubernetes message kept in a detail
constexpr std::string_view kCompletionIndex = "batch.kubernetes.io/job-completion-index";
constexpr std::string_view kTokenLabel = "orchestrate.dev/token";
constexpr std::string_view kContainerName = "job";
constexpr int kHttpGone = 410;

// Text as it may appear in an error message: at most 200 bytes, control bytes escaped.
std::string quote(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxQuoted)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4u];
      out += kHex[u & 0xFu];
    } else {
      out += c;
    }
  }
  if (text.size() > kMaxQuoted) out += "...";
  return out;
}

std::string dump_quoted(const Json& v) {
  try {
    return quote(v.dump());
  } catch (const Json::exception&) {
    return "(unprintable)";
  }
}

const char* type_name(const Json& v) {
  return v.type_name();
}

// Reads fields of a parsed document, keeping the first error (with the field's path).
class Reader {
 public:
  explicit Reader(std::string what) : what_(std::move(what)) {}

  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

  void fail(const std::string& path, std::string_view expected, const Json& got) {
    if (error_) return;
    error_ = make_error(ErrorKind::invalid, "malformed Kubernetes " + what_ + ": " + path +
                                                " should be " + std::string(expected) + ", got " +
                                                type_name(got) + " " + dump_quoted(got));
  }
  void fail_text(const std::string& message) {
    if (error_) return;
    error_ = make_error(ErrorKind::invalid, "malformed Kubernetes " + what_ + ": " + message);
  }

  // nullptr when absent or null.
  const Json* member(const Json& parent, std::string_view key) {
    if (!parent.is_object()) return nullptr;
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return nullptr;
    return &*it;
  }
  const Json* object(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v != nullptr && !v->is_object()) {
      fail(path, "an object", *v);
      return nullptr;
    }
    return v;
  }
  const Json* array(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v != nullptr && !v->is_array()) {
      fail(path, "an array", *v);
      return nullptr;
    }
    return v;
  }
  std::string str(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v == nullptr) return {};
    if (!v->is_string()) {
      fail(path, "a string", *v);
      return {};
    }
    return v->get<std::string>();
  }
  std::optional<int> integer(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer()) {
      fail(path, "an integer", *v);
      return std::nullopt;
    }
    auto n = v->get<std::int64_t>();
    if (n < INT_MIN || n > INT_MAX) {
      fail(path, "an integer that fits 32 bits", *v);
      return std::nullopt;
    }
    return static_cast<int>(n);
  }
  bool boolean(const Json& parent, std::string_view key, const std::string& path) {
    const Json* v = member(parent, key);
    if (v == nullptr) return false;
    if (!v->is_boolean()) {
      fail(path, "true or false", *v);
      return false;
    }
    return v->get<bool>();
  }

 private:
  std::string what_;
  std::optional<Error> error_;
};

Result<Json> parse_document(std::string_view text, const std::string& what) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return make_error(ErrorKind::invalid,
                      "Kubernetes " + what + " is not valid JSON: '" + quote(text) + "'");
  }
  if (!doc.is_object()) {
    return make_error(ErrorKind::invalid, "Kubernetes " + what + " should be a JSON object, got " +
                                              type_name(doc) + " '" + quote(text) + "'");
  }
  return doc;
}

std::string at(const std::string& prefix, std::string_view field) {
  return prefix.empty() ? std::string(field) : prefix + "." + std::string(field);
}

std::string at(const std::string& prefix, std::string_view field, std::size_t index) {
  return at(prefix, field) + "[" + std::to_string(index) + "]";
}

std::vector<KubeCondition> read_conditions(Reader& r, const Json& status, const std::string& p) {
  std::vector<KubeCondition> out;
  const Json* list = r.array(status, "conditions", at(p, "conditions"));
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& c = (*list)[i];
    std::string cp = at(p, "conditions", i);
    if (!c.is_object()) {
      r.fail(cp, "an object", c);
      return out;
    }
    KubeCondition k;
    k.type = r.str(c, "type", at(cp, "type"));
    k.status = r.str(c, "status", at(cp, "status"));
    k.reason = r.str(c, "reason", at(cp, "reason"));
    k.message = r.str(c, "message", at(cp, "message"));
    out.push_back(std::move(k));
  }
  return out;
}

const KubeCondition* find_condition(const std::vector<KubeCondition>& conds,
                                    std::string_view type) {
  for (const auto& c : conds) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool condition_true(const std::vector<KubeCondition>& conds, std::string_view type) {
  const KubeCondition* c = find_condition(conds, type);
  return c != nullptr && c->status == "True";
}

// metadata.name, which every object has.
std::string read_name(Reader& r, const Json& obj, const std::string& p, const Json** metadata) {
  *metadata = r.object(obj, "metadata", at(p, "metadata"));
  if (!r.ok()) return {};
  std::string name;
  if (*metadata != nullptr) name = r.str(**metadata, "name", at(p, "metadata.name"));
  if (r.ok() && name.empty()) r.fail_text(at(p, "metadata.name") + " is missing");
  return name;
}

// The items of a list document.
const Json* read_items(Reader& r, const Json& doc) {
  const Json* items = r.array(doc, "items", "items");
  if (r.ok() && items == nullptr && !doc.contains("items")) {
    r.fail_text("the list has no \"items\"");
  }
  return items;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Kubernetes' words on one line: control characters (a termination message or a hook's stderr
// may span lines) as blanks, at most kMaxWords bytes cut at a UTF-8 boundary.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  if (out.size() > kMaxWords) {
    std::size_t cut = kMaxWords;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0u) == 0x80u) --cut;
    out.resize(cut);
    out += "...";
  }
  return trimmed(out);
}

// "<reason>: <message>", either may be empty.
std::string reason_and_message(const std::string& reason, const std::string& message) {
  std::string m = one_line(message);
  std::string r = one_line(reason);
  if (r.empty()) return m;
  if (m.empty()) return r;
  return r + ": " + m;
}

// ---- nodes ----------------------------------------------------------------------------

KubeNode read_node(Reader& r, const Json& obj, const std::string& p,
                   std::string_view gpu_resource) {
  KubeNode node;
  const Json* metadata = nullptr;
  node.info.name = read_name(r, obj, p, &metadata);
  if (!r.ok()) return node;
  node.resource_version = r.str(*metadata, "resourceVersion", at(p, "metadata.resourceVersion"));
  if (const Json* labels = r.object(*metadata, "labels", at(p, "metadata.labels"))) {
    node.gpu_product = r.str(*labels, kGpuProductLabel,
                             at(p, "metadata.labels[" + std::string(kGpuProductLabel) + "]"));
  }

  if (const Json* spec = r.object(obj, "spec", at(p, "spec"))) {
    node.unschedulable = r.boolean(*spec, "unschedulable", at(p, "spec.unschedulable"));
    if (const Json* taints = r.array(*spec, "taints", at(p, "spec.taints"))) {
      for (std::size_t i = 0; i < taints->size() && r.ok(); ++i) {
        const Json& t = (*taints)[i];
        std::string tp = at(p, "spec.taints", i);
        if (!t.is_object()) {
          r.fail(tp, "an object", t);
          break;
        }
        KubeTaint taint;
        taint.key = r.str(t, "key", at(tp, "key"));
        taint.value = r.str(t, "value", at(tp, "value"));
        taint.effect = r.str(t, "effect", at(tp, "effect"));
        node.taints.push_back(std::move(taint));
      }
    }
  }

  if (const Json* status = r.object(obj, "status", at(p, "status"))) {
    if (const Json* alloc = r.object(*status, "allocatable", at(p, "status.allocatable"))) {
      const Json* q = r.member(*alloc, gpu_resource);
      std::string qp = at(p, "status.allocatable[" + std::string(gpu_resource) + "]");
      if (q != nullptr && q->is_string()) {
        auto gpus = parse_whole_quantity(q->get<std::string>());
        if (gpus) {
          node.info.gpus = *gpus;
        } else {
          r.fail_text(qp + ": " + gpus.error().message);
        }
      } else if (q != nullptr && q->is_number_integer() && q->get<std::int64_t>() >= 0 &&
                 q->get<std::int64_t>() <= INT_MAX) {
        node.info.gpus = static_cast<int>(q->get<std::int64_t>());
      } else if (q != nullptr) {
        r.fail(qp, "a quantity such as \"8\"", *q);
      }
    }
    node.conditions = read_conditions(r, *status, at(p, "status"));
  }
  if (!r.ok()) return node;

  // Health, and what is wrong in words.
  std::vector<std::string> problems;
  const KubeCondition* ready = find_condition(node.conditions, "Ready");
  node.ready = ready != nullptr ? ready->status : "";
  if (ready == nullptr) {
    problems.emplace_back("no Ready condition");
  } else if (ready->status != "True") {
    std::string head =
        ready->status == "False" ? "NotReady" : "NotReady (Ready=" + ready->status + ")";
    std::string why = reason_and_message(ready->reason, ready->message);
    problems.push_back(why.empty() ? head : head + ": " + why);
  }
  if (node.unschedulable) problems.emplace_back("unschedulable (cordoned)");
  bool tainted = false;
  for (const KubeTaint& t : node.taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    // GKE taints every GPU node nvidia.com/gpu=present:NoSchedule to keep other pods off;
    // attempts tolerate exactly that (kube_manifest.cpp). Any other value (an operator's
    // nvidia.com/gpu=broken) is a problem.
    if (t.key == gpu_resource && t.value == "present" && t.effect == "NoSchedule") continue;
    tainted = true;
    if (node.unschedulable && t.key == "node.kubernetes.io/unschedulable") continue;
    if (node.ready != "True" &&
        (t.key == "node.kubernetes.io/not-ready" || t.key == "node.kubernetes.io/unreachable")) {
      continue;
    }
    problems.push_back("taint " + t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect);
  }
  node.info.healthy = node.ready == "True" && !node.unschedulable && !tainted;
  for (const auto& what : problems) {
    node.info.reason += (node.info.reason.empty() ? "" : "; ") + what;
  }
  return node;
}

// ---- pods and jobs ----------------------------------------------------------------------

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
  const Json& c = (*list)[chosen];
  std::string cp = at(p, "containerStatuses", chosen);
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
    std::string text =
        r.str(*m, kCompletionIndex,
              at(p, "metadata." + std::string(where) + "[" + std::string(kCompletionIndex) + "]"));
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
  if (const Json* labels = r.object(*metadata, "labels", at(p, "metadata.labels"))) {
    pod.token = r.str(*labels, kTokenLabel, at(p, "metadata.labels[orchestrate.dev/token]"));
  }
  pod.completion_index = read_index(r, *metadata, p);
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
  }
  return pod;
}

KubeJobInfo read_job(Reader& r, const Json& obj, const std::string& p) {
  KubeJobInfo job;
  const Json* metadata = nullptr;
  job.name = read_name(r, obj, p, &metadata);
  if (!r.ok()) return job;
  job.resource_version = r.str(*metadata, "resourceVersion", at(p, "metadata.resourceVersion"));
  job.deleting = r.member(*metadata, "deletionTimestamp") != nullptr;
  if (const Json* labels = r.object(*metadata, "labels", at(p, "metadata.labels"))) {
    job.token = r.str(*labels, kTokenLabel, at(p, "metadata.labels[orchestrate.dev/token]"));
  }
  if (const Json* spec = r.object(obj, "spec", at(p, "spec"))) {
    job.completions = r.integer(*spec, "completions", at(p, "spec.completions")).value_or(1);
    job.parallelism = r.integer(*spec, "parallelism", at(p, "spec.parallelism")).value_or(1);
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

template <typename T, typename ReadOne>
Result<std::vector<T>> parse_list(std::string_view text, const std::string& what,
                                  ReadOne read_one) {
  try {
    auto doc = parse_document(text, what);
    if (!doc) return doc.error();
    Reader r(what);
    std::vector<T> out;
    const Json* items = read_items(r, *doc);
    if (items != nullptr) {
      for (std::size_t i = 0; i < items->size() && r.ok(); ++i) {
        const Json& item = (*items)[i];
        std::string p = "items[" + std::to_string(i) + "]";
        if (!item.is_object()) {
          r.fail(p, "an object", item);
          break;
        }
        out.push_back(read_one(r, item, p));
      }
    }
    if (!r.ok()) return r.error();
    return out;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid,
                      "malformed Kubernetes " + what + ": " + std::string(e.what()));
  }
}

template <typename T, typename ReadOne>
Result<T> parse_one(std::string_view text, const std::string& what, ReadOne read_one) {
  try {
    auto doc = parse_document(text, what);
    if (!doc) return doc.error();
    Reader r(what);
    T out = read_one(r, *doc, std::string());
    if (!r.ok()) return r.error();
    return out;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid,
                      "malformed Kubernetes " + what + ": " + std::string(e.what()));
  }
}

// ---- the attempt ------------------------------------------------------------------------

// Severity of an ended pod's outcome, for "the worst cause wins".
int severity(const ExitStatus& e) {
  constexpr int kSignal = 128;
  ExitCause c = ExitCause::lost;
  if (e.cause) {
    c = *e.cause;
  } else if (e.node_lost) {
    c = ExitCause::node_lost;
  } else if (e.signal) {
    c = ExitCause::killed_by_signal;
  } else if (e.exit_code) {
    int code = *e.exit_code;
    if (code == 0) {
      c = ExitCause::succeeded;
    } else if (code == kSignal + 9 || code == kSignal + 15) {
      c = ExitCause::killed_by_signal;
    } else {
      c = ExitCause::user_error;
    }
  }
  switch (c) {
    case ExitCause::node_lost:
      return 9;
    case ExitCause::preempted:
      return 8;
    case ExitCause::time_limit:
      return 7;
    case ExitCause::launch_failed:
      return 6;
    case ExitCause::out_of_memory:
      return 5;
    case ExitCause::user_error:
      return 4;
    case ExitCause::killed_by_signal:
      return 3;
    case ExitCause::succeeded:
      return 1;
    default:
      return 2;
  }
}

enum class Fate { queued, running, ended, stuck };

struct PodVerdict {
  const PodInfo* pod = nullptr;
  Fate fate = Fate::queued;
  ExitStatus exit;  // ended and stuck
  std::string note;
  bool unschedulable = false;
};

// Whether text contains `needle` (given in lower case), ignoring case.
bool contains_ci(std::string_view text, std::string_view needle) {
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  if (needle.size() > text.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= text.size(); ++i) {
    bool match = true;
    for (std::size_t k = 0; k < needle.size() && match; ++k)
      match = lower(text[i + k]) == needle[k];
    if (match) return true;
  }
  return false;
}

constexpr std::string_view kUserWaitingReasons[] = {
    "ImagePullBackOff",           "ErrImagePull",         "InvalidImageName", "ErrImageNeverPull",
    "CreateContainerConfigError", "CreateContainerError",
};

bool is_user_waiting_reason(std::string_view reason) {
  return std::find(std::begin(kUserWaitingReasons), std::end(kUserWaitingReasons), reason) !=
         std::end(kUserWaitingReasons);
}

ExitStatus with_cause(ExitCause cause, std::string detail) {
  ExitStatus e;
  e.cause = cause;
  e.node_lost = cause == ExitCause::node_lost;
  e.detail = std::move(detail);
  return e;
}

// The container's exit code and signal, when it reported a termination.
void copy_termination(const PodInfo& pod, ExitStatus& e) {
  if (pod.container && pod.container->state == "terminated") {
    e.exit_code = pod.container->exit_code;
    e.signal = pod.container->signal;
  }
}

// Why a Failed pod failed.
ExitStatus failed_pod_status(const PodInfo& pod) {
  const std::optional<ContainerStatusInfo>& c = pod.container;
  const bool terminated = c && c->state == "terminated";
  const std::string term_reason = terminated ? c->reason : "";
  const std::string pod_words = reason_and_message(pod.reason, pod.message);
  ExitStatus e;

  if (const KubeCondition* d = find_condition(pod.conditions, "DisruptionTarget");
      d != nullptr && d->status == "True") {
    bool preempt = d->reason == "PreemptionByScheduler" ||
                   d->reason == "PreemptionByKubeScheduler" || d->reason == "EvictionByEvictionAPI";
    std::string words = reason_and_message(d->reason, d->message);
    if (!pod_words.empty() && pod.reason != d->reason) {
      // The kubelet repeats its eviction message in the condition: say it once.
      words = pod_words + " (" + (trimmed(d->message) == trimmed(pod.message) ? d->reason : words) +
              ")";
    }
    e = with_cause(preempt ? ExitCause::preempted : ExitCause::node_lost, words);
  } else if (pod.reason == "Evicted" || pod.reason == "NodeLost" || pod.reason == "Shutdown" ||
             pod.reason == "Terminated" || pod.reason == "UnexpectedAdmissionError" ||
             pod.reason.rfind("OutOf", 0) == 0) {
    e = with_cause(ExitCause::node_lost, pod_words);
  } else if (pod.reason == "DeadlineExceeded") {
    e = with_cause(ExitCause::time_limit, pod_words);
  } else if (term_reason == "OOMKilled") {
    e = with_cause(ExitCause::out_of_memory, reason_and_message(c->reason, c->message));
  } else if (term_reason == "ContainerStatusUnknown") {
    e = with_cause(ExitCause::node_lost, reason_and_message(c->reason, c->message));
  } else if (term_reason == "StartError" || term_reason == "ContainerCannotRun") {
    const std::string& m = c->message;
    ExitCause cause = ExitCause::launch_failed;
    if (contains_ci(m, "nvidia") || contains_ci(m, "nvml")) {
      cause = ExitCause::node_lost;
    } else if (contains_ci(m, "executable file not found") ||
               contains_ci(m, "no such file or directory")) {
      cause = ExitCause::user_error;
    }
    e = with_cause(cause, reason_and_message(c->reason, c->message));
  } else {
    std::string words = terminated ? reason_and_message(c->reason, c->message) : pod_words;
    if (terminated && c->exit_code) {
      std::string code = "exit code " + std::to_string(*c->exit_code);
      words = words.empty() ? code : words + ", " + code;
    } else if (words.empty()) {
      words = "Failed without a container status";
    }
    e.detail = words;
  }
  copy_termination(pod, e);
  return e;
}

std::string ready_words(const KubeNode& node) {
  const KubeCondition* ready = find_condition(node.conditions, "Ready");
  if (ready == nullptr) return "no Ready condition";
  std::string why = reason_and_message(ready->reason, ready->message);
  return "Ready=" + ready->status + (why.empty() ? "" : ": " + why);
}

PodVerdict judge_pod(const PodInfo& pod, const std::map<std::string, const KubeNode*>* nodes) {
  PodVerdict v;
  v.pod = &pod;
  if (pod.phase == "Succeeded") {
    v.fate = Fate::ended;
    v.exit.exit_code = 0;
    std::string reason =
        pod.container && !pod.container->reason.empty() ? pod.container->reason : "Succeeded";
    v.exit.detail = reason;
    return v;
  }
  if (pod.phase == "Failed") {
    v.fate = Fate::ended;
    v.exit = failed_pod_status(pod);
    return v;
  }
  // Still live as far as Kubernetes knows.
  if (nodes != nullptr && !pod.node_name.empty()) {
    auto it = nodes->find(pod.node_name);
    if (it == nodes->end()) {
      v.fate = Fate::stuck;
      v.exit =
          with_cause(ExitCause::node_lost, "NodeLost: node " + pod.node_name + " no longer exists");
      return v;
    }
    if (it->second->ready != "True") {
      v.fate = Fate::stuck;
      v.exit =
          with_cause(ExitCause::node_lost, "NodeNotReady: node " + pod.node_name +
                                               " is not Ready (" + ready_words(*it->second) + ")");
      return v;
    }
  }
  // The node controller's word that the node is unreachable (NodeLost), or a deletion by the
  // taint manager (a NoExecute taint such as node.kubernetes.io/unreachable) or by the pod
  // garbage collector (the node object is gone): no kubelet will finish this pod.
  if (pod.reason == "NodeLost") {
    v.fate = Fate::stuck;
    v.exit = with_cause(ExitCause::node_lost, reason_and_message(pod.reason, pod.message));
    return v;
  }
  if (const KubeCondition* d = find_condition(pod.conditions, "DisruptionTarget");
      d != nullptr && d->status == "True" &&
      (d->reason == "DeletionByTaintManager" || d->reason == "DeletionByPodGC")) {
    v.fate = Fate::stuck;
    v.exit = with_cause(ExitCause::node_lost, reason_and_message(d->reason, d->message));
    return v;
  }
  if (pod.container && pod.container->state == "waiting" &&
      is_user_waiting_reason(pod.container->reason)) {
    v.fate = Fate::stuck;
    v.exit = with_cause(ExitCause::user_error,
                        reason_and_message(pod.container->reason, pod.container->message));
    return v;
  }
  if (pod.phase == "Running") {
    v.fate = Fate::running;
    return v;
  }
  if (pod.phase == "Unknown") {
    v.fate = Fate::running;
    v.note = "pod " + pod.name + " is in phase Unknown (its node does not report)";
    return v;
  }
  v.fate = Fate::queued;
  const KubeCondition* sched = find_condition(pod.conditions, "PodScheduled");
  if (sched != nullptr && sched->status == "False") {
    v.unschedulable = sched->reason == "Unschedulable";
    v.note =
        reason_and_message(sched->reason.empty() ? "not scheduled" : sched->reason, sched->message);
  } else if (pod.container && pod.container->state == "waiting" && !pod.container->reason.empty()) {
    v.note = reason_and_message(pod.container->reason, pod.container->message);
  }
  return v;
}

std::string where(const PodInfo& pod) {
  return "pod " + pod.name + (pod.node_name.empty() ? ", not scheduled" : " on " + pod.node_name);
}

bool job_finished_ok(const KubeJobInfo& job) {
  return condition_true(job.conditions, "Complete") ||
         condition_true(job.conditions, "SuccessCriteriaMet");
}

const KubeCondition* job_failure(const KubeJobInfo& job) {
  for (const char* type : {"Failed", "FailureTarget"}) {
    const KubeCondition* c = find_condition(job.conditions, type);
    if (c != nullptr && c->status == "True") return c;
  }
  return nullptr;
}

AttemptView from_job_only(const std::optional<KubeJobInfo>& job) {
  AttemptView view;
  if (!job) return view;  // unknown
  const std::string suffix = " (Job " + job->name + ", which has no pods left)";
  if (job_finished_ok(*job)) {
    const KubeCondition* c = find_condition(job->conditions, "Complete");
    if (c == nullptr || c->status != "True")
      c = find_condition(job->conditions, "SuccessCriteriaMet");
    ExitStatus e;
    e.exit_code = 0;
    e.detail = reason_and_message(c->type, c->message) + suffix;
    view.phase = RunPhase::exited;
    view.exit = e;
    return view;
  }
  if (const KubeCondition* f = job_failure(*job)) {
    ExitStatus e;
    if (f->reason == "DeadlineExceeded") e.cause = ExitCause::time_limit;
    e.detail = reason_and_message(f->reason.empty() ? f->type : f->reason, f->message) + suffix;
    view.phase = RunPhase::exited;
    view.exit = e;
    return view;
  }
  if (job->deleting) {
    ExitStatus e;
    e.detail = "the Job " + job->name + " is being deleted and has no pods left";
    view.phase = RunPhase::exited;
    view.exit = e;
    return view;
  }
  view.phase = RunPhase::queued;
  view.note = "the Job " + job->name + " has no pods yet";
  return view;
}

}  // namespace

// ---- public -----------------------------------------------------------------------------

Result<int> parse_whole_quantity(std::string_view quantity) {
  auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::invalid,
                      "quantity '" + quote(quantity) + "' is not a whole number: " + why);
  };
  std::size_t digits = 0;
  while (digits < quantity.size() && quantity[digits] >= '0' && quantity[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) return bad("it must start with a digit");
  std::string_view suffix = quantity.substr(digits);
  static const std::pair<std::string_view, std::uint64_t> kSuffixes[] = {
      {"", 1},
      {"k", 1000ULL},
      {"M", 1000ULL * 1000},
      {"G", 1000ULL * 1000 * 1000},
      {"T", 1000ULL * 1000 * 1000 * 1000},
      {"P", 1000ULL * 1000 * 1000 * 1000 * 1000},
      {"E", 1000ULL * 1000 * 1000 * 1000 * 1000 * 1000},
      {"Ki", 1ULL << 10u},
      {"Mi", 1ULL << 20u},
      {"Gi", 1ULL << 30u},
      {"Ti", 1ULL << 40u},
      {"Pi", 1ULL << 50u},
      {"Ei", 1ULL << 60u},
  };
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    value = value * 10 + static_cast<std::uint64_t>(quantity[i] - '0');
    if (value > static_cast<std::uint64_t>(INT_MAX) * 1000) return bad("it is too large");
  }
  if (suffix == "m") {
    if (value % 1000 != 0) return bad("it is a fraction");
    return static_cast<int>(value / 1000);
  }
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix != name) continue;
    if (value != 0 && factor > static_cast<std::uint64_t>(INT_MAX) / value) {
      return bad("it is too large");
    }
    std::uint64_t total = value * factor;
    if (total > static_cast<std::uint64_t>(INT_MAX)) return bad("it is too large");
    return static_cast<int>(total);
  }
  return bad("unknown suffix '" + quote(suffix) + "'");
}

Result<std::vector<KubeNode>> parse_node_list(std::string_view json,
                                              std::string_view gpu_resource) {
  return parse_list<KubeNode>(json, "NodeList",
                              [&](Reader& r, const Json& o, const std::string& p) {
                                return read_node(r, o, p, gpu_resource);
                              });
}

Result<KubeNode> parse_node(std::string_view json, std::string_view gpu_resource) {
  return parse_one<KubeNode>(json, "Node", [&](Reader& r, const Json& o, const std::string& p) {
    return read_node(r, o, p, gpu_resource);
  });
}

std::vector<NodeInfo> node_infos(const std::vector<KubeNode>& nodes) {
  std::vector<NodeInfo> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) out.push_back(n.info);
  return out;
}

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

AttemptView map_attempt(const std::vector<PodInfo>& pods, const std::optional<KubeJobInfo>& job,
                        const std::vector<KubeNode>* nodes) {
  if (pods.empty()) return from_job_only(job);

  std::map<std::string, const KubeNode*> node_map;
  if (nodes != nullptr) {
    for (const auto& n : *nodes) node_map[n.info.name] = &n;
  }

  // Pods by completion index (unindexed last), then name.
  std::vector<const PodInfo*> order;
  order.reserve(pods.size());
  for (const auto& p : pods) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const PodInfo* a, const PodInfo* b) {
    int ia = a->completion_index.value_or(INT_MAX);
    int ib = b->completion_index.value_or(INT_MAX);
    return ia != ib ? ia < ib : a->name < b->name;
  });

  AttemptView view;
  std::vector<PodVerdict> verdicts;
  bool any_stuck = false;
  bool any_live = false;
  bool any_running = false;
  bool any_ended = false;
  for (const PodInfo* p : order) {
    if (!p->node_name.empty() &&
        std::find(view.nodes.begin(), view.nodes.end(), p->node_name) == view.nodes.end()) {
      view.nodes.push_back(p->node_name);
    }
    PodVerdict v = judge_pod(*p, nodes != nullptr ? &node_map : nullptr);
    any_stuck = any_stuck || v.fate == Fate::stuck;
    any_live = any_live || v.fate == Fate::queued || v.fate == Fate::running;
    any_running = any_running || v.fate == Fate::running;
    any_ended = any_ended || v.fate == Fate::ended;
    if (v.unschedulable && !view.unschedulable) {
      view.unschedulable = true;
      view.note = v.note;
    }
    if (view.note.empty() && !v.note.empty()) view.note = v.note;
    verdicts.push_back(std::move(v));
  }

  if (!any_stuck && any_live) {
    view.phase = (any_running || any_ended) ? RunPhase::running : RunPhase::queued;
    return view;
  }
  if (!any_stuck && job && !job_finished_ok(*job) && job_failure(*job) == nullptr &&
      static_cast<int>(pods.size()) < job->completions) {
    view.phase = RunPhase::running;
    view.note = "waiting for the Job's other pods (" + std::to_string(pods.size()) + " of " +
                std::to_string(job->completions) + " seen)";
    return view;
  }

  // Exited: the worst outcome wins.
  view.phase = RunPhase::exited;
  const PodVerdict* worst = nullptr;
  int worst_rank = -1;
  for (const auto& v : verdicts) {
    if (v.fate != Fate::ended && v.fate != Fate::stuck) continue;
    int rank = severity(v.exit);
    if (rank > worst_rank) {
      worst_rank = rank;
      worst = &v;
    }
  }
  // Every pod exited here, or a stuck one did: worst is set.
  ExitStatus exit = worst->exit;
  int same = 0;
  for (const auto& v : verdicts) {
    if ((v.fate == Fate::ended || v.fate == Fate::stuck) && severity(v.exit) == worst_rank) ++same;
  }
  std::string place = where(*worst->pod);
  if (pods.size() > 1) {
    place += "; " + std::to_string(same) + " of " + std::to_string(pods.size()) + " pods";
  }
  exit.detail = exit.detail.empty() ? place : exit.detail + " (" + place + ")";
  // The Job's deadline explains pods it killed, but not pods that all finished their work.
  ExitStatus success;
  success.exit_code = 0;
  if (job && worst_rank > severity(success)) {
    const KubeCondition* f = job_failure(*job);
    if (f != nullptr && f->reason == "DeadlineExceeded") {
      ExitStatus deadline =
          with_cause(ExitCause::time_limit,
                     reason_and_message(f->reason, f->message) + " (Job " + job->name + ")");
      if (severity(deadline) > worst_rank) exit = deadline;
    }
  }
  view.exit = exit;
  // Pods Kubernetes still shows unfinished outlive this view: the Job must be deleted.
  view.pods_left = any_stuck;
  return view;
}

Result<WatchEvent> parse_watch_event(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.empty()) {
    return make_error(ErrorKind::invalid, "empty watch event line (skip blank lines)");
  }
  try {
    auto doc = parse_document(line, "watch event");
    if (!doc) return doc.error();
    Reader r("watch event");
    WatchEvent ev;
    std::string type = r.str(*doc, "type", "type");
    const Json* obj = r.object(*doc, "object", "object");
    if (!r.ok()) return r.error();
    static const std::pair<std::string_view, WatchEventType> kTypes[] = {
        {"ADDED", WatchEventType::added},       {"MODIFIED", WatchEventType::modified},
        {"DELETED", WatchEventType::deleted},   {"ERROR", WatchEventType::error},
        {"BOOKMARK", WatchEventType::bookmark},
    };
    bool known = false;
    for (const auto& [name, value] : kTypes) {
      if (name == type) {
        ev.type = value;
        known = true;
      }
    }
    if (!known) {
      return make_error(ErrorKind::invalid, "watch event of unknown type '" + quote(type) +
                                                "' (expected ADDED, MODIFIED, DELETED, ERROR or "
                                                "BOOKMARK): '" +
                                                quote(line) + "'");
    }
    if (obj == nullptr) {
      return make_error(ErrorKind::invalid,
                        "watch event without an \"object\": '" + quote(line) + "'");
    }
    ev.object = obj->dump();
    ev.kind = r.str(*obj, "kind", "object.kind");
    if (ev.type == WatchEventType::error) {
      ApiStatus st;
      st.code = r.integer(*obj, "code", "object.code").value_or(0);
      st.reason = r.str(*obj, "reason", "object.reason");
      st.message = r.str(*obj, "message", "object.message");
      if (!r.ok()) return r.error();
      ev.gone = st.code == kHttpGone || st.reason == "Expired" || st.reason == "Gone";
      ev.status = st;
      return ev;
    }
    const Json* metadata = r.object(*obj, "metadata", "object.metadata");
    if (metadata != nullptr) {
      ev.name = r.str(*metadata, "name", "object.metadata.name");
      ev.resource_version = r.str(*metadata, "resourceVersion", "object.metadata.resourceVersion");
    }
    if (!r.ok()) return r.error();
    if (ev.type == WatchEventType::bookmark && ev.resource_version.empty()) {
      return make_error(ErrorKind::invalid,
                        "BOOKMARK watch event without a resourceVersion: '" + quote(line) + "'");
    }
    return ev;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid, "malformed watch event: " + std::string(e.what()));
  }
}

Result<std::string> parse_list_resource_version(std::string_view json) {
  try {
    auto doc = parse_document(json, "list");
    if (!doc) return doc.error();
    Reader r("list");
    const Json* metadata = r.object(*doc, "metadata", "metadata");
    std::string rv;
    if (metadata != nullptr) rv = r.str(*metadata, "resourceVersion", "metadata.resourceVersion");
    if (!r.ok()) return r.error();
    if (rv.empty()) {
      return make_error(ErrorKind::invalid,
                        "Kubernetes list without metadata.resourceVersion: '" + quote(json) + "'");
    }
    return rv;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid, "malformed Kubernetes list: " + std::string(e.what()));
  }
}

Result<ApiStatus> parse_api_status(std::string_view json) {
  try {
    auto doc = parse_document(json, "Status");
    if (!doc) return doc.error();
    Reader r("Status");
    std::string kind = r.str(*doc, "kind", "kind");
    ApiStatus st;
    st.code = r.integer(*doc, "code", "code").value_or(0);
    st.reason = r.str(*doc, "reason", "reason");
    st.message = r.str(*doc, "message", "message");
    if (!r.ok()) return r.error();
    if (kind != "Status") {
      return make_error(ErrorKind::invalid, "expected a Kubernetes Status, got kind '" +
                                                quote(kind) + "': '" + quote(json) + "'");
    }
    return st;
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::invalid, "malformed Kubernetes Status: " + std::string(e.what()));
  }
}

}  // namespace orch::kube
