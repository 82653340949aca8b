#include "adapters/transfer/transfer_route.h"

namespace orch::transfer {
namespace {

const ClusterSpec* find_cluster(const std::vector<ClusterSpec>& clusters, const std::string& name) {
  for (const auto& c : clusters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

Result<void> check_provider(const ClusterSpec& c) {
  if (c.provider == "local" || c.provider == "slurm") return Ok{};
  if (c.provider == "kubernetes") {
    return make_error(ErrorKind::unsupported,
                      "cluster " + c.name +
                          " is a Kubernetes site: transfers to or from it are not supported yet "
                          "(they need a pod with the storage mounted and rsync in it)");
  }
  return make_error(ErrorKind::unsupported,
                    "cluster " + c.name + " has provider '" + c.provider +
                        "', which has no transfer route (local and slurm have)");
}

// A login node this machine logs in to with the OpenSSH client.
Result<void> check_login(const ClusterSpec& c) {
  if (c.ssh.host.empty()) {
    return make_error(ErrorKind::invalid, "cluster " + c.name + " has no ssh.host");
  }
  if (!c.ssh.key_passphrase_env.empty()) {
    return make_error(ErrorKind::unsupported,
                      "cluster " + c.name +
                          "'s ssh key needs a passphrase (ssh.key_passphrase_env " +
                          c.ssh.key_passphrase_env +
                          "): transfers run the OpenSSH client in batch mode, which cannot ask "
                          "for it; give transfers a key without a passphrase");
  }
  return Ok{};
}

}  // namespace

Result<RoutePlan> plan_route(const std::vector<ClusterSpec>& clusters,
                             const TransferRequest& request) {
  const ClusterSpec* from = find_cluster(clusters, request.from.cluster);
  const ClusterSpec* to = find_cluster(clusters, request.to.cluster);
  if (from == nullptr || to == nullptr) {
    return make_error(ErrorKind::invalid,
                      "transfer " + std::to_string(request.id) + ": unknown cluster '" +
                          (from == nullptr ? request.from.cluster : request.to.cluster) + "'");
  }
  for (const auto* path : {&request.from.path, &request.to.path}) {
    if (path->empty() || path->front() != '/') {
      return make_error(ErrorKind::invalid, "transfer " + std::to_string(request.id) + ": path '" +
                                                *path + "' is not absolute");
    }
  }
  if (from->name == to->name && request.from.path == request.to.path) {
    return make_error(ErrorKind::invalid, "transfer " + std::to_string(request.id) + " copies " +
                                              from->name + ":" + request.from.path +
                                              " onto itself");
  }
  if (auto r = check_provider(*from); !r) return r.error();
  if (auto r = check_provider(*to); !r) return r.error();

  RoutePlan plan;
  plan.from = *from;
  plan.to = *to;
  const bool remote_from = from->provider == "slurm";
  const bool remote_to = to->provider == "slurm";
  if (remote_from) {
    if (auto r = check_login(*from); !r) return r.error();
  }
  if (remote_to) {
    if (auto r = check_login(*to); !r) return r.error();
  }
  if (!remote_from && !remote_to) {
    plan.kind = RouteKind::local;
    plan.name = "local";
  } else if (from->name == to->name) {
    plan.kind = RouteKind::on_login_node;
    plan.name = "on " + to->name + " login node";
  } else if (remote_from && remote_to) {
    auto peer = to->data.pull_from.find(from->name);
    if (peer != to->data.pull_from.end() && !peer->second.host.empty()) {
      plan.kind = RouteKind::pull_via_destination;
      plan.peer = peer->second;
      plan.name = "pull via " + to->name + " login node";
    } else {
      plan.kind = RouteKind::relay;
      plan.name = "relay via orchestrator";
    }
  } else if (remote_from) {
    plan.kind = RouteKind::pull_here;
    plan.name = "pull from " + from->name + " login node";
  } else {
    plan.kind = RouteKind::push_here;
    plan.name = "push to " + to->name + " login node";
  }
  return plan;
}

double effective_cap(double requested, const ClusterSpec& from, const ClusterSpec& to) {
  double cap = requested > 0 ? requested : 0;
  for (double mb : {from.data.bwlimit_mb_s, to.data.bwlimit_mb_s}) {
    if (mb > 0 && (cap == 0 || mb * 1e6 < cap)) cap = mb * 1e6;
  }
  return cap;
}

}  // namespace orch::transfer
