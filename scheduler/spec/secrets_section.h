#pragma once
// The clusters file's `secrets:` map (docs/security.md): each secret's name, its source on the
// server ({file: /abs/path} or {env: VAR}) and the teams it is granted to, checked as the rest
// of the file is (file:line:col). Nothing is read here; the server reads each source when it
// starts (scheduler/secrets).

#include <vector>

#include "scheduler/spec/cluster_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

void read_secrets(const yaml::MapView& file, std::vector<ConfiguredSecret>& out);

}  // namespace orch
