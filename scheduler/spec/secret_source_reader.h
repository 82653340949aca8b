#pragma once
// Reading a secret's source on the server, {file: /abs/path} or {env: VAR}, where the clusters
// file (an administrator's) names one: a webhook's signing key and the `secrets:` section. Never
// from a job spec (a job names a registered secret).

#include <string>

#include "scheduler/model/site_types.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// The source at `node` (context names it in errors, e.g. "webhook ops.secret"); false with
// the reader failed when it is not exactly one of a file's absolute path or a variable name.
bool read_secret_source(yaml::Reader& r, const YAML::Node& node, const std::string& context,
                        SecretSource& out);

// The same, from a map already open (which may allow more keys than file and env).
bool read_secret_source(yaml::MapView& source, const std::string& context, SecretSource& out);

}  // namespace orch
