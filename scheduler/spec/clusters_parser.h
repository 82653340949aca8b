#pragma once
// Reads the clusters file (which sites exist, how to reach them, where the server listens)
// into a ClustersFile, validating every field. See docs/config.md for the format.

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch {

// Never throws. Errors are ErrorKind::invalid with a message of the form
// "<source_name>:<line>:<col>: <what is wrong>; expected <what was expected>".
Result<ClustersFile> parse_clusters_file(std::string_view yaml_text, std::string_view source_name);
// The same for a document that joins clusters already running (`orchestrate cluster add`):
// data.pull_from may also name one of also_known.
Result<ClustersFile> parse_clusters_file(std::string_view yaml_text, std::string_view source_name,
                                         const std::vector<std::string>& also_known);

// Reads `path` and parses it, naming the path in errors. A file that cannot be read is an
// ErrorKind::io error. also_known as for parse_clusters_file.
Result<ClustersFile> load_clusters_file(const std::string& path,
                                        const std::vector<std::string>& also_known = {});

}  // namespace orch
