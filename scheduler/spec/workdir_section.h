#pragma once
// A job file's `workdir:` and `setup:` keys (issue 40, docs/config.md "workdir"):
//
//   workdir: ./src                    # as submitted: a directory of the submitting machine
//   workdir: {source: ./src, sha256: <64 hex>, bytes: 10240}   # as stored by the server
//   setup: "pip install -e ."         # or a list of lines, joined with "\n"
//   setup_per_node: false
//
// The parser only checks shapes; the server fills in sha256 and bytes (web/job_routes.cpp)
// after checking that the archive was uploaded by the submitter.

#include <string_view>

#include "scheduler/spec/job_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// Whether s is a SHA-256 as the code store names archives: 64 lowercase hex digits.
bool is_sha256_hex(std::string_view s);

// Reads workdir, setup and setup_per_node from the job map, recording the first bad value.
void read_workdir_and_setup(yaml::MapView& job, JobSpec& spec);

}  // namespace orch
