#include "testkit/fake_kube/hooks.h"

#include <cstdlib>

#include <signal.h>

#include <vector>

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {
namespace {

using json = nlohmann::json;

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : path + "/") {
    if (c == '/') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

void answer(ResponseWriter& out, const std::string& error, const json& ok_body = {}) {
  if (error.empty()) {
    return send_json(out, 200, ok_body.is_null() ? json{{"ok", true}} : ok_body);
  }
  const int code = error.find("not found") != std::string::npos        ? 404
                   : error.find("already exists") != std::string::npos ? 409
                                                                       : 400;
  const char* reason = code == 404 ? "NotFound" : code == 409 ? "AlreadyExists" : "BadRequest";
  send_error(out, ApiError(code, reason, error));
}

bool truthy(const std::string& v) {
  return v == "1" || v == "true" || v == "True";
}

void pod_hook(ApiState& state, const Request& req, ResponseWriter& out, const std::string& ns,
              const std::string& name, const std::string& action) {
  Cluster& cluster = state.cluster;
  const auto pod = cluster.store().get("pods", ns, name);
  if (!pod) return answer(out, "pods \"" + name + "\" not found");
  if (action.empty() && req.method == "GET") {
    return send_json(out, 200, cluster.locked([&] { return cluster.kubelet().describe(*pod); }));
  }
  if (req.method != "POST") return answer(out, "use POST for /fake/.../pods/NAME/" + action);
  if (action == "kill") {
    const int sig = parse_signal(req.param("signal").empty() ? "KILL" : req.param("signal"));
    if (sig <= 0) return answer(out, "unknown signal \"" + req.param("signal") + "\"");
    const std::string reason = req.param("reason");
    return answer(out, cluster.locked([&] { return cluster.kubelet().kill(*pod, sig, reason); }));
  }
  if (action == "evict") {
    std::string message = req.param("message");
    if (message.empty()) {
      message =
          "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. ";
    }
    return answer(out, cluster.locked([&] { return cluster.kubelet().evict(*pod, message); }));
  }
  answer(out, "unknown pod hook \"" + action + "\" (kill, evict)");
}

}  // namespace

int parse_signal(const std::string& text) {
  std::string s = text;
  if (s.rfind("SIG", 0) == 0) s = s.substr(3);
  static const std::pair<const char*, int> kNames[] = {
      {"KILL", SIGKILL}, {"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},   {"SEGV", SIGSEGV},
      {"ABRT", SIGABRT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"QUIT", SIGQUIT}, {"BUS", SIGBUS}};
  for (const auto& [name, sig] : kNames) {
    if (s == name) return sig;
  }
  const long long n = parse_count(json(s));
  return n > 0 && n < 65 ? static_cast<int>(n) : -1;
}

bool handle_hook(ApiState& state, const Request& req, ResponseWriter& out) {
  const auto seg = split(req.path);
  if (seg.empty() || seg[0] != "fake") return false;
  Cluster& cluster = state.cluster;
  // /fake/nodes/NAME/{notready,ready}, POST /fake/nodes
  if (seg.size() == 2 && seg[1] == "nodes" && req.method == "POST") {
    try {
      const json body = json::parse(req.body);
      const auto nodes = parse_node_configs(body.is_array() ? body : json::array({body}));
      for (const auto& n : nodes) {
        if (auto error = cluster.add_node(n); !error.empty()) {
          answer(out, error);
          return true;
        }
      }
      answer(out, "");
    } catch (const std::exception& e) {
      answer(out, std::string("bad node list: ") + e.what());
    }
    return true;
  }
  if (seg.size() == 4 && seg[1] == "nodes" && req.method == "POST") {
    if (seg[3] == "notready") {
      answer(out, cluster.set_node_not_ready(seg[2], !truthy(req.param("keepPods"))));
    } else if (seg[3] == "ready") {
      answer(out, cluster.set_node_ready(seg[2]));
    } else if (seg[3] == "freeze") {
      answer(out, cluster.freeze_node(seg[2]));
    } else {
      answer(out, "unknown node hook \"" + seg[3] + "\" (notready, ready, freeze)");
    }
    return true;
  }
  // /fake/namespaces/NS/pods/NAME[/kill|/evict]
  if ((seg.size() == 5 || seg.size() == 6) && seg[1] == "namespaces" && seg[3] == "pods") {
    pod_hook(state, req, out, seg[2], seg[4], seg.size() == 6 ? seg[5] : "");
    return true;
  }
  // /fake/namespaces/NS/jobs/NAME/suspend: Kueue's preemption (the Job suspended again, its
  // Workload Evicted with reason Preempted)
  if (seg.size() == 6 && seg[1] == "namespaces" && seg[3] == "jobs" && seg[5] == "suspend" &&
      req.method == "POST") {
    const bool found = cluster.kueue().preempt(cluster.store(), seg[2], seg[4]);
    cluster.kick();
    answer(out, found ? "" : "jobs.batch \"" + seg[4] + "\" not found");
    return true;
  }
  // /fake/queues/NAME?gpus=N: a Kueue LocalQueue and its GPU quota
  if (seg.size() == 3 && seg[1] == "queues" && req.method == "POST") {
    const std::string gpus = req.param("gpus");
    char* end = nullptr;
    const long long n = std::strtoll(gpus.c_str(), &end, 10);
    if (gpus.empty() || *end != '\0' || n < 0) {
      answer(out, "gpus= must be a whole number >= 0");
      return true;
    }
    cluster.kueue().set_quota(seg[2], n);
    cluster.kick();
    answer(out, "");
    return true;
  }
  // /fake/exec/cut?afterBytes=N: the next exec stream past N bytes breaks there (exec_cut.h)
  if (seg.size() == 3 && seg[1] == "exec" && seg[2] == "cut") {
    if (req.method == "DELETE") {
      state.exec_cut.disarm();
      answer(out, "");
      return true;
    }
    const std::string after = req.param("afterBytes");
    char* end = nullptr;
    const long long n = std::strtoll(after.c_str(), &end, 10);
    if (req.method != "POST" || after.empty() || *end != '\0' || n < 0) {
      answer(out, "POST /fake/exec/cut?afterBytes=N (a whole number >= 0), or DELETE");
      return true;
    }
    state.exec_cut.arm(n);
    answer(out, "");
    return true;
  }
  if (seg.size() == 3 && seg[1] == "watches" && seg[2] == "drop" && req.method == "POST") {
    cluster.store().close_watchers();
    answer(out, "");
    return true;
  }
  // /fake/gc?enabled=false: the garbage collector off (true: on again)
  if (seg.size() == 2 && seg[1] == "gc" && req.method == "POST") {
    cluster.set_garbage_collection(truthy(req.param("enabled")));
    answer(out, "");
    return true;
  }
  // /fake/forbid?verb=V&resource=R: RBAC without the verb (rbac.h); DELETE allows all again
  if (seg.size() == 2 && seg[1] == "forbid") {
    if (req.method == "DELETE") {
      state.forbidden.allow_all();
    } else if (req.param("verb").empty() || req.param("resource").empty()) {
      answer(out, "verb= and resource= are required");
      return true;
    } else {
      state.forbidden.forbid(req.param("verb"), req.param("resource"));
    }
    answer(out, "");
    return true;
  }
  if (seg.size() == 2 && seg[1] == "compact" && req.method == "POST") {
    state.gone_as_http = truthy(req.param("http"));
    cluster.store().compact();
    answer(out, "", {{"ok", true}, {"resourceVersion", cluster.store().resource_version()}});
    return true;
  }
  answer(out, "unknown hook " + req.method + " " + req.path + " (see testkit/fake_kube/README.md)");
  return true;
}

}  // namespace orch::fake_kube
