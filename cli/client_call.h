#pragma once
// What every client command file shares: one REST call that prints its error and picks the exit
// code, and the JSON output. Internal to cli/ (client_commands.cpp, node_commands.cpp, ...).

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli/client_commands.h"
#include "web/http/http_types.h"

namespace orch {

// One call; on any failure (no answer, HTTP >= 400) prints "error: ..." on err and returns its
// exit code, else kExitOk with response filled.
int call(const ClientOptions& o, const std::string& method, const std::string& target,
         HttpResponse& response, std::ostream& err, const std::string& body = "",
         const std::string& content_type = "application/json");
// call() whose answer must be JSON, parsed into out_body.
int call_json(const ClientOptions& o, const std::string& method, const std::string& target,
              nlohmann::json& out_body, std::ostream& err, const std::string& body = "",
              const std::string& content_type = "application/json");

// POSTs a file the user names (a job spec, a clusters document) to target, with ?source= naming
// it for the server's errors and its Content-Type from its extension (.json, else YAML). A file
// that cannot be read, or is larger than the server would take, is a usage error.
// extra_query ("&name=value...", already encoded) follows ?source=.
int post_file(const ClientOptions& o, const std::string& target, const std::string& file,
              nlohmann::json& out_body, std::ostream& err, const std::string& extra_query = "");

// `job submit`'s request: the spec file read (a usage error when it cannot be), changed by
// extras' -e and --set (cli/spec_overrides.h), its workdir packed and uploaded
// (cli/workdir_upload.h), then POSTed to /api/v1/jobs (with ?queue_anyway=true when asked).
// Shared by run_job_submit and run_job_submit_follow.
int submit_spec(const ClientOptions& o, const std::string& file, std::uint64_t workdir_limit,
                const SubmitExtras& extras, nlohmann::json& out_body, std::ostream& err);

bool as_json(const ClientOptions& o);  // -o json
void print_json(const nlohmann::json& body, std::ostream& out);

// path with a query string of the pairs whose value is not empty, each percent-encoded:
// with_query("/api/v1/jobs", {{"state", "running"}, {"cluster", ""}}) ->
// "/api/v1/jobs?state=running".
std::string with_query(std::string path,
                       std::initializer_list<std::pair<const char*, std::string>> params);

// "/api/v1/clusters/<name>" with the name percent-encoded.
std::string cluster_path(const std::string& name);

}  // namespace orch
