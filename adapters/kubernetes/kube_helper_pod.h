#pragma once
// The short-lived pods orchestrate runs beside the jobs at a Kubernetes site (pure: bodies and
// names, no I/O):
// - the storage helper: one per site, on the cluster's volumes, sleeping while the site runs
//   commands in it through pods/exec (the storage scripts of adapters/storage: list, hash,
//   delete; tar streams for copies, `tail -c` and `cat >>` for the files a resumed copy
//   continues). Deleted when idle, replaced when its node is NotReady.
// - probe pods: one per node of a burn-in round, pinned to its node by node affinity,
//   running `<agent> probe` to its end; the result is the last line of its log.
// Both use kubernetes.helper_image (else the cluster's image), the cluster's pull secrets,
// tolerations, node selector and volumes (PodKind::helper), restartPolicy Never, no service
// account token, and the label orchestrate.dev/helper=<storage|probe> (not managed-by, so the
// attempts' pod cache never sees them).

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/model/site_types.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::kube {

inline constexpr std::string_view kHelperLabel = "orchestrate.dev/helper";
inline constexpr std::string_view kHelperContainer = "helper";
// How long a storage helper may live at most (activeDeadlineSeconds); the site deletes it much
// sooner, once idle.
inline constexpr int kHelperLifetimeS = 6 * 3600;

// "orch-storage-<8 hex digits of the site's name>": one per site, found again after a restart.
std::string storage_helper_name(const std::string& site);

// The storage helper Pod (JSON), running `sleep` for its lifetime.
Result<std::string> storage_helper_body(const ClusterSpec& cluster, const std::string& namespace_);

struct ProbePod {
  std::string name;  // "<the token's Job name>-<index>": unique in the round
  std::string node;
  std::string body;  // the Pod (JSON)
};

// One probe pod per node: `<agent> probe --dir <dir> --io-bytes N --compute-s S`, the node's
// name in ORCH_NODE_NAME (downward API spec.nodeName), gpus_per_node GPUs requested so the
// probe sees them, activeDeadlineSeconds = the round. ErrorKind::invalid for a token that is
// not a label value, a node name that is not a DNS subdomain, or a dir that is not absolute.
Result<std::vector<ProbePod>> probe_pods(const ClusterSpec& cluster, const std::string& namespace_,
                                         const ProbeRequest& request,
                                         const std::vector<std::string>& nodes,
                                         const std::string& dir, int gpus_per_node);

}  // namespace orch::kube
