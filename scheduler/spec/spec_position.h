#pragma once
// Where in a submitted document an error found after parsing lies. The parser says
// "job.yaml:3:7: ..." itself; checks made later (by the brain, the secret registry, the rules of
// who may ask for what) only know a key, which they put in Error::where: "team",
// "placement.allowed[1]", "secret_env.HF_TOKEN". The side that still holds the document turns
// that into the same "source:line:col: " prefix, so every spec error reads alike.

#include <optional>
#include <string_view>

#include "scheduler/common/result.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// The position of the value at `path` in the YAML document ("a.b[2].c"); nullopt when the
// document does not read or has no such key.
std::optional<yaml::Position> position_in(std::string_view document, std::string_view path);

// e with "source:line:col: " before its message when e.where names a key of the document (the
// value's position; "a|b": the first of a and b the document has); e unchanged otherwise.
// `where` itself is kept.
Error locate_error(Error e, std::string_view document, std::string_view source);

}  // namespace orch
