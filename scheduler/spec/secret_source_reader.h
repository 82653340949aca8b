#pragma once
// Reading a secret's source, {file: /abs/path} or {env: VAR}, where a spec names one: a job's
// secret_env values and a webhook's secret share it.

#include <string>

#include "scheduler/model/site_types.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// The source at `node` (context names it in errors, e.g. "secret_env.HF_TOKEN"); false with
// the reader failed when it is not exactly one of a file's absolute path or a variable name.
bool read_secret_source(yaml::Reader& r, const YAML::Node& node, const std::string& context,
                        SecretSource& out);

}  // namespace orch
