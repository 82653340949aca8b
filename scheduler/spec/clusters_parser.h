#pragma once
// Reads the clusters file (which sites exist, how to reach them, where the server listens)
// into a ClustersFile, validating every field. See docs/config.md for the format.

#include <string>
#include <string_view>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// Never throws. Errors are ErrorKind::invalid with a message of the form
// "<source_name>:<line>:<col>: <what is wrong>; expected <what was expected>".
Result<ClustersFile> parse_clusters_file(std::string_view yaml_text, std::string_view source_name);

// Reads `path` and parses it, naming the path in errors. A file that cannot be read is an
// ErrorKind::io error.
Result<ClustersFile> load_clusters_file(const std::string& path);

}  // namespace orch
