#include "adapters/transfer/transfer_route.h"

namespace orch::transfer {
namespace {

// The provider's route to its storage (provider_catalog.h); none is an error that says why.
Result<DataRoute> data_route(const ClusterSpec& c) {
  const ProviderTraits* p = find_provider(c.provider);
  if (p != nullptr && p->data_route == DataRoute::pod_exec) {
    return make_error(ErrorKind::unsupported,
                      "cluster " + c.name + " has provider " + c.provider +
                          ": its copies travel through pods/exec, not rsync");
  }
  if (p != nullptr && p->data_route != DataRoute::none) return p->data_route;
  std::string why = p != nullptr && !p->no_data_route_why.empty()
                        ? std::string(p->no_data_route_why)
                        : std::string("no transfer route reaches its storage");
  return make_error(ErrorKind::unsupported,
                    "cluster " + c.name + " has provider " + c.provider + ": " + why);
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
  auto from_route = data_route(*from);
  if (!from_route) return from_route.error();
  auto to_route = data_route(*to);
  if (!to_route) return to_route.error();

  RoutePlan plan;
  plan.from = *from;
  plan.to = *to;
  const bool remote_from = *from_route == DataRoute::ssh;
  const bool remote_to = *to_route == DataRoute::ssh;
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
