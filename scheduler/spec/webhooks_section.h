#pragma once
// The clusters file's `webhooks:` list (docs/config.md): each {name, url, events, secret,
// format}, checked as the rest of the file is (file:line:col, the nearest valid word).

#include <vector>

#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

void read_webhooks(const yaml::MapView& file, std::vector<WebhookSpec>& out);

}  // namespace orch
