#include "server/site_factories.h"

#include "adapters/kubernetes/kube_site.h"
#include "adapters/local/local_site.h"
#include "adapters/slurm/slurm_site.h"

namespace orch {

std::span<const SiteFactory> site_factories() {
  static const SiteFactory factories[] = {
      {"local", make_local_site},
      {"slurm", make_slurm_site},
      {"kubernetes", make_kubernetes_site},
  };
  return factories;
}

Result<std::unique_ptr<ClusterPort>> make_site(const ClusterSpec& cluster,
                                               const SiteContext& context) {
  for (const SiteFactory& f : site_factories()) {
    if (f.provider == cluster.provider) return f.make(cluster, context);
  }
  return make_error(ErrorKind::unsupported, "cluster " + cluster.name + ": provider \"" +
                                                cluster.provider +
                                                "\" is not supported by this build");
}

}  // namespace orch
