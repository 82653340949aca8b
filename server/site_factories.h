#pragma once
// The composition root's table of site makers: one row per provider that this build can run
// (the provider's facts are in scheduler/spec/provider_catalog.h).

#include <memory>
#include <span>
#include <string_view>

#include "scheduler/site_factory.h"

namespace orch {

struct SiteFactory {
  std::string_view provider;
  SiteMaker make;
};

std::span<const SiteFactory> site_factories();

// The cluster's site, made by its provider's maker; unsupported when this build has none.
Result<std::unique_ptr<ClusterPort>> make_site(const ClusterSpec& cluster,
                                               const SiteContext& context);

}  // namespace orch
