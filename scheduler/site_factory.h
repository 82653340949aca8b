#pragma once
// How a provider's adapter makes the ClusterPort of one cluster: the composition root looks the
// cluster's provider up in its table of makers (server/site_factories.cpp) and calls it with what
// every site may need from the server.

#include <memory>
#include <string>

#include "scheduler/cluster_port.h"
#include "scheduler/pushed_records.h"
#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

struct SiteContext {
  std::string agent_path;  // the orchestrate-agent binary each launch runs under
  // Where agents push their records home (issue 44); null when the server serves no HTTPS.
  const PushHome* push_home = nullptr;
};

// The site of one cluster, or why it cannot be made (a kubeconfig that does not load, ...).
// Makes no connection: a site that is down at start is the site worker's to handle.
using SiteMaker = Result<std::unique_ptr<ClusterPort>> (*)(const ClusterSpec& cluster,
                                                           const SiteContext& context);

}  // namespace orch
