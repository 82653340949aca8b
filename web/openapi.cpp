#include "web/openapi.h"

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace orch {
namespace {

using nlohmann::json;

struct Param {
  const char* name;
  const char* type;  // string | integer | boolean
  const char* description;
};

// What a request carries: nothing, a JSON object of a schema, or a document (YAML or JSON).
enum class Body { none, json_optional, json_required, document };

enum class Answer { json, text, html_or_file, metrics };

struct Operation {
  const char* method;
  const char* path;
  const char* tag;
  const char* summary;
  std::vector<Param> query;
  Body body = Body::none;
  const char* body_schema = "";
  int ok = 200;
  const char* ok_schema = "Object";
  Answer answer = Answer::json;
  std::vector<int> errors;
  bool open = false;  // no token needed
};

// Every route of the server, in docs/rest-api.md's words (that file has the details).
const std::vector<Operation>& operations() {
  static const std::vector<Operation> ops = {
      {"GET",
       "/healthz",
       "server",
       "Liveness and the brain's queue",
       {},
       Body::none,
       "",
       200,
       "Health",
       Answer::json,
       {},
       true},
      {"GET",
       "/",
       "page",
       "The status page",
       {},
       Body::none,
       "",
       200,
       "",
       Answer::html_or_file,
       {},
       true},
      {"GET",
       "/ui/{file}",
       "page",
       "A file of the status page (script, style, uPlot)",
       {},
       Body::none,
       "",
       200,
       "",
       Answer::html_or_file,
       {404},
       true},
      {"GET",
       "/api/v1/openapi.json",
       "server",
       "This document",
       {},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {},
       true},
      {"GET",
       "/metrics",
       "server",
       "The fleet and the server's health in Prometheus's text format",
       {},
       Body::none,
       "",
       200,
       "",
       Answer::metrics,
       {503}},
      {"GET",
       "/api/v1/whoami",
       "access",
       "The token's user and role",
       {},
       Body::none,
       "",
       200,
       "Whoami",
       Answer::json,
       {}},
      {"GET",
       "/api/v1/tokens",
       "access",
       "Every token's name, role and state (never a token)",
       {},
       Body::none,
       "",
       200,
       "TokenList"},
      {"POST",
       "/api/v1/tokens",
       "access",
       "Make a token; it is shown once",
       {},
       Body::json_required,
       "TokenRequest",
       201,
       "NewToken",
       Answer::json,
       {409, 422}},
      {"POST",
       "/api/v1/tokens/{name}/revoke",
       "access",
       "Refuse a user's token from now on",
       {},
       Body::none,
       "",
       200,
       "Token",
       Answer::json,
       {404}},
      {"GET",
       "/api/v1/secrets",
       "access",
       "Every secret a job may name, with its grants and age (never a value)",
       {},
       Body::none,
       "",
       200,
       "SecretList"},
      {"PUT",
       "/api/v1/secrets/{name}",
       "access",
       "Create or replace a secret and its grants",
       {},
       Body::json_required,
       "SecretRequest",
       200,
       "Secret",
       Answer::json,
       {409, 422}},
      {"POST",
       "/api/v1/secrets/{name}/grant",
       "access",
       "Replace the teams a secret is granted to",
       {},
       Body::json_required,
       "SecretGrant",
       200,
       "Secret",
       Answer::json,
       {404, 409, 422}},
      {"DELETE",
       "/api/v1/secrets/{name}",
       "access",
       "Delete a secret: jobs that name it are not launched again",
       {},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {404, 409}},
      {"GET",
       "/api/v1/audit",
       "access",
       "Who changed what, allowed or refused, newest first",
       {{"limit", "integer", "1 to 1000 (default 100)"},
        {"before", "integer", "entries older than this id"}},
       Body::none,
       "",
       200,
       "AuditPage",
       Answer::json,
       {400}},
      {"GET",
       "/api/v1/clusters",
       "clusters",
       "Clusters with health, admission, GPUs and nodes",
       {},
       Body::none,
       "",
       200,
       "ClusterList"},
      {"POST",
       "/api/v1/clusters",
       "clusters",
       "Add clusters from a clusters document to the running server",
       {{"source", "string", "names the document in errors"}},
       Body::document,
       "ClustersDocument",
       201,
       "Object",
       Answer::json,
       {409, 415, 422}},
      {"POST",
       "/api/v1/clusters/reload",
       "clusters",
       "Read the clusters file again",
       {},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {422, 501}},
      {"POST",
       "/api/v1/clusters/{name}/drain",
       "clusters",
       "No new work; running jobs move at their next checkpoint",
       {},
       Body::json_optional,
       "Reason",
       200,
       "Cluster",
       Answer::json,
       {404, 409}},
      {"POST",
       "/api/v1/clusters/{name}/activate",
       "clusters",
       "Back in service",
       {},
       Body::json_optional,
       "Reason",
       200,
       "Cluster",
       Answer::json,
       {404, 409}},
      {"POST",
       "/api/v1/clusters/{name}/retire",
       "clusters",
       "Out of service for good; its jobs move at once",
       {},
       Body::json_optional,
       "Reason",
       200,
       "Cluster",
       Answer::json,
       {404, 409}},
      {"GET",
       "/api/v1/clusters/{name}/nodes",
       "nodes",
       "A cluster's nodes and recent node events",
       {{"limit", "integer", "events, 1 to 1000 (default 50)"}},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {400, 404}},
      {"POST",
       "/api/v1/clusters/{name}/outage",
       "clusters",
       "Simulate an outage of a local site, or end it",
       {},
       Body::json_required,
       "Outage",
       200,
       "Object",
       Answer::json,
       {404, 501}},
      {"GET",
       "/api/v1/nodes",
       "nodes",
       "Every node with its standing and counted failures",
       {{"cluster", "string", "one cluster's"},
        {"state", "string", "active, quarantined or retired"}},
       Body::none,
       "",
       200,
       "NodeList",
       Answer::json,
       {400, 404}},
      {"POST",
       "/api/v1/clusters/{name}/nodes/{node}/quarantine",
       "nodes",
       "Take a node out of service",
       {},
       Body::json_optional,
       "Reason",
       200,
       "Node",
       Answer::json,
       {404}},
      {"POST",
       "/api/v1/clusters/{name}/nodes/{node}/release",
       "nodes",
       "Return a node to service",
       {},
       Body::json_optional,
       "Reason",
       200,
       "Node",
       Answer::json,
       {404}},
      {"POST",
       "/api/v1/clusters/{name}/burn-in",
       "nodes",
       "Start a probe round on every node",
       {},
       Body::none,
       "",
       202,
       "Object",
       Answer::json,
       {404, 409}},
      {"GET",
       "/api/v1/clusters/{name}/probes",
       "nodes",
       "Probe results, newest first",
       {{"node", "string", "one node's"}, {"limit", "integer", "1 to 1000"}},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {400, 404}},
      {"GET",
       "/api/v1/reports/providers",
       "reports",
       "Provider scorecards",
       {{"window_days", "integer", "1 to 3650 (default 30)"}},
       Body::none,
       "",
       200,
       "ProviderReport",
       Answer::json,
       {400}},
      {"POST",
       "/api/v1/tickets",
       "tickets",
       "Open a support ticket with a cluster's provider",
       {},
       Body::json_required,
       "TicketOpen",
       201,
       "Ticket",
       Answer::json,
       {404, 422}},
      {"GET",
       "/api/v1/tickets",
       "tickets",
       "Tickets, newest first",
       {{"cluster", "string", "one cluster's"},
        {"state", "string", "open or closed"},
        {"limit", "integer", "1 to 1000"}},
       Body::none,
       "",
       200,
       "TicketList",
       Answer::json,
       {400}},
      {"GET",
       "/api/v1/tickets/{id}",
       "tickets",
       "A ticket with its notes",
       {},
       Body::none,
       "",
       200,
       "Ticket",
       Answer::json,
       {400, 404}},
      {"POST",
       "/api/v1/tickets/{id}/updates",
       "tickets",
       "Add a note (the provider's first one times the response)",
       {},
       Body::json_required,
       "TicketNote",
       200,
       "Ticket",
       Answer::json,
       {404, 409, 422}},
      {"POST",
       "/api/v1/tickets/{id}/close",
       "tickets",
       "Close a ticket",
       {},
       Body::json_optional,
       "TicketClose",
       200,
       "Ticket",
       Answer::json,
       {404, 409}},
      {"GET",
       "/api/v1/jobs",
       "jobs",
       "Jobs, newest first, a page at a time",
       {{"state", "string", "a job state"},
        {"cluster", "string", "latest attempt's cluster"},
        {"owner", "string", "submitted by"},
        {"team", "string", "the spec's team"},
        {"group", "string", "a sweep's name, or the spec's group"},
        {"limit", "integer", "1 to 1000 (default 100)"},
        {"cursor", "string", "the previous page's next"}},
       Body::none,
       "",
       200,
       "JobPage",
       Answer::json,
       {400}},
      {"POST",
       "/api/v1/jobs",
       "jobs",
       "Submit a job spec",
       {{"source", "string", "names the spec in errors"}},
       Body::document,
       "JobSpec",
       201,
       "Submitted",
       Answer::json,
       {400, 413, 415, 422}},
      {"GET",
       "/api/v1/jobs/{id}",
       "jobs",
       "A job with its spec and checkpoint advice",
       {},
       Body::none,
       "",
       200,
       "JobDetail",
       Answer::json,
       {400, 404}},
      {"GET",
       "/api/v1/jobs/{id}/attempts",
       "jobs",
       "A job's attempts",
       {},
       Body::none,
       "",
       200,
       "AttemptList",
       Answer::json,
       {400, 404}},
      {"GET",
       "/api/v1/jobs/{id}/events",
       "jobs",
       "A job's events, oldest first",
       {},
       Body::none,
       "",
       200,
       "EventList",
       Answer::json,
       {400, 404}},
      {"GET",
       "/api/v1/jobs/{id}/explain",
       "jobs",
       "Why the job was placed where it was, or why it waits",
       {},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {400, 404}},
      {"GET",
       "/api/v1/jobs/{id}/logs",
       "jobs",
       "An attempt's log from a byte offset (X-Next-Offset says where to go on)",
       {{"attempt", "integer", "default: the latest"}, {"offset", "integer", "default 0"}},
       Body::none,
       "",
       200,
       "",
       Answer::text,
       {400, 404, 503}},
      {"GET",
       "/api/v1/jobs/{id}/mfu",
       "jobs",
       "The job's MFU per attempt, a bucket a minute",
       {},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {400, 404}},
      {"POST",
       "/api/v1/jobs/{id}/cancel",
       "jobs",
       "Cancel a job (a user: only their own)",
       {},
       Body::json_optional,
       "Object",
       202,
       "Object",
       Answer::json,
       {400, 404, 409}},
      {"GET",
       "/api/v1/jobs/{id}/checkpoints",
       "data",
       "A job's checkpoints and their copies",
       {},
       Body::none,
       "",
       200,
       "Object",
       Answer::json,
       {400, 404}},
      {"GET",
       "/api/v1/data/datasets",
       "data",
       "Datasets and their copies",
       {},
       Body::none,
       "",
       200,
       "Object"},
      {"POST",
       "/api/v1/data/datasets",
       "data",
       "Register a dataset whose first copy is at a cluster",
       {},
       Body::json_required,
       "DatasetRequest",
       201,
       "Object",
       Answer::json,
       {409, 422}},
      {"POST",
       "/api/v1/data/replicate",
       "data",
       "Copy a dataset or a job's newest checkpoint to a cluster",
       {},
       Body::json_required,
       "ReplicateRequest",
       202,
       "Object",
       Answer::json,
       {404, 409, 422}},
      {"GET",
       "/api/v1/data/transfers",
       "data",
       "Transfers, newest first",
       {{"all", "boolean", "finished ones too"}, {"limit", "integer", "1 to 1000"}},
       Body::none,
       "",
       200,
       "TransferList",
       Answer::json,
       {400}},
      {"GET",
       "/api/v1/data/transfers/{id}",
       "data",
       "A transfer",
       {},
       Body::none,
       "",
       200,
       "Transfer",
       Answer::json,
       {400, 404}},
      {"POST",
       "/api/v1/data/audit",
       "data",
       "Check every copy (or one cluster's) now",
       {},
       Body::json_optional,
       "AuditRequest",
       202,
       "Object",
       Answer::json,
       {404, 422}},
  };
  return ops;
}

json ref(const std::string& schema) {
  return {{"$ref", "#/components/schemas/" + schema}};
}

json object(std::initializer_list<std::pair<const char*, json>> properties,
            std::vector<std::string> required = {}) {
  json p = json::object();
  for (const auto& [name, schema] : properties) p[name] = schema;
  json out = {{"type", "object"}, {"properties", p}};
  if (!required.empty()) out["required"] = required;
  return out;
}

json type(const char* t, const char* description = "") {
  json out = {{"type", t}};
  if (*description) out["description"] = description;
  return out;
}

json nullable(const char* t) {
  return {{"type", json::array({t, "null"})}};
}

json list_of(const char* key, const std::string& item) {
  return object({{key, {{"type", "array"}, {"items", ref(item)}}}}, {key});
}

json schemas() {
  json s;
  s["Problem"] = object({{"type", type("string")},
                         {"title", type("string")},
                         {"status", type("integer")},
                         {"detail", type("string", "what went wrong and what to do")}},
                        {"title", "status", "detail"});
  s["Object"] = {{"type", "object"}};
  s["Health"] = object({{"status", type("string")}, {"brain_queue", type("integer")}});
  s["Whoami"] = object({{"user", type("string")}, {"role", type("string")}}, {"user", "role"});
  s["Token"] = object({{"name", type("string")},
                       {"role", type("string")},
                       {"teams", {{"type", "array"}, {"items", type("string")}}},
                       {"state", type("string")},
                       {"created_by", type("string")},
                       {"created_ms", type("integer")},
                       {"revoked_ms", nullable("integer")}});
  s["TokenList"] = list_of("tokens", "Token");
  s["TokenRequest"] =
      object({{"name", type("string", "the user: 1 to 64 letters, digits, . _ -")},
              {"role", {{"enum", {"viewer", "user", "operator", "admin"}}}},
              {"teams",
               {{"type", "array"},
                {"items", type("string")},
                {"description", "the teams a user may submit for; first: default"}}}},
             {"name", "role"});
  s["Secret"] = object({{"name", type("string")},
                        {"teams", {{"type", "array"}, {"items", type("string")}}},
                        {"source", type("string", "api or clusters file")},
                        {"updated_by", type("string")},
                        {"created_ms", type("integer")},
                        {"updated_ms", type("integer")}});
  s["SecretList"] = list_of("secrets", "Secret");
  s["SecretRequest"] = object({{"value", type("string", "the value as text")},
                               {"value_base64", type("string", "or any bytes, in base64")},
                               {"teams", {{"type", "array"}, {"items", type("string")}}}});
  s["SecretGrant"] = object({{"teams", {{"type", "array"}, {"items", type("string")}}}}, {"teams"});
  s["NewToken"] = object({{"name", type("string")},
                          {"role", type("string")},
                          {"token", type("string", "shown this once")},
                          {"note", type("string")}});
  s["AuditPage"] = object({{"entries", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                           {"next", nullable("integer")}});
  s["Cluster"] = object({{"name", type("string")},
                         {"provider", type("string")},
                         {"health", type("string")},
                         {"admission", type("string")},
                         {"gpus_total", type("integer")},
                         {"gpus_used", type("integer")},
                         {"gpus_foreign", type("integer")},
                         {"gpus_spare", type("integer", "held idle by hot spares")},
                         {"spares",
                          {{"type", "object"},
                           {"description",
                            "hot spares: wanted, ready, nodes [{node, state, since_ms}], "
                            "gpu_hours_idle, taken, failed_burn_in, lost"}}},
                         {"node_list", {{"type", "array"}}}});
  s["ClusterList"] = list_of("clusters", "Cluster");
  s["ClustersDocument"] = {{"type", "object"},
                           {"description", "a clusters file: {clusters: [...]} (docs/config.md)"}};
  s["Reason"] = object({{"reason", type("string")}});
  s["Outage"] = object({{"down", type("boolean")}}, {"down"});
  s["Node"] = object({{"cluster", type("string")},
                      {"name", type("string")},
                      {"state", type("string")},
                      {"failures", type("integer")},
                      {"next_failure", type("string")}});
  s["NodeList"] = list_of("nodes", "Node");
  s["ProviderReport"] = object({{"window_start_ms", type("integer")},
                                {"now_ms", type("integer")},
                                {"cards", {{"type", "array"}, {"items", {{"type", "object"}}}}}});
  s["Ticket"] = object({{"id", type("integer")},
                        {"cluster", type("string")},
                        {"summary", type("string")},
                        {"opened_ms", type("integer")},
                        {"resolved_ms", nullable("integer")}});
  s["TicketList"] = list_of("tickets", "Ticket");
  s["TicketOpen"] = object({{"cluster", type("string")},
                            {"summary", type("string")},
                            {"nodes", {{"type", "array"}, {"items", type("string")}}},
                            {"incident", type("string")}},
                           {"cluster", "summary"});
  s["TicketNote"] =
      object({{"text", type("string")}, {"from_provider", type("boolean")}}, {"text"});
  s["TicketClose"] = object({{"resolution", type("string")}});
  s["Job"] = object({{"id", type("integer")},
                     {"name", type("string")},
                     {"owner", type("string")},
                     {"team", type("string")},
                     {"group", type("string")},
                     {"state", type("string")},
                     {"cluster", nullable("string")},
                     {"attempts", type("integer")},
                     {"step", nullable("integer")},
                     {"mfu", nullable("number")},
                     {"ettr", nullable("number")},
                     {"reason", type("string")}});
  s["JobPage"] =
      object({{"jobs", {{"type", "array"}, {"items", ref("Job")}}}, {"next", nullable("string")}},
             {"jobs"});
  s["JobDetail"] = {
      {"allOf",
       json::array({ref("Job"), object({{"spec", {{"type", "object"}}},
                                        {"checkpoint_advice",
                                         {{"type", json::array({"object", "null"})}}}})})}};
  s["JobSpec"] = object({{"name", type("string")},
                         {"command", type("string")},
                         {"resources", {{"type", "object"}}},
                         {"env", {{"type", "object"}}},
                         {"secret_env", {{"type", "object"}}},
                         {"team", type("string")},
                         {"group", type("string")},
                         {"sweep", {{"type", "object"}}}},
                        {"name", "command"});
  s["JobSpec"]["description"] = "a job spec in YAML or JSON (docs/config.md)";
  s["Submitted"] = object({{"id", type("integer")},
                           {"name", type("string")},
                           {"state", type("string")},
                           {"group", type("string")},
                           {"jobs", {{"type", "array"}, {"items", ref("SubmittedPoint")}}}});
  s["SubmittedPoint"] =
      object({{"id", type("integer")}, {"name", type("string")}, {"state", type("string")}});
  s["Attempt"] = object({{"no", type("integer")},
                         {"cluster", type("string")},
                         {"state", type("string")},
                         {"cause", type("string")},
                         {"nodes", {{"type", "array"}, {"items", type("string")}}},
                         {"started_ms", type("integer")},
                         {"ended_ms", nullable("integer")}});
  s["AttemptList"] = list_of("attempts", "Attempt");
  s["Event"] = object({{"at_ms", type("integer")},
                       {"kind", type("string")},
                       {"message", type("string")},
                       {"attempt_no", nullable("integer")}});
  s["EventList"] = list_of("events", "Event");
  s["DatasetRequest"] =
      object({{"name", type("string")}, {"cluster", type("string")}, {"path", type("string")}},
             {"name", "cluster", "path"});
  s["ReplicateRequest"] = object(
      {{"dataset", type("string")}, {"job", type("integer")}, {"to", type("string")}}, {"to"});
  s["AuditRequest"] = object({{"cluster", type("string")}});
  s["Transfer"] = object({{"id", type("integer")},
                          {"what", type("string")},
                          {"state", type("string")},
                          {"bytes_total", nullable("integer")},
                          {"bytes_done", type("integer")},
                          {"rate_mb_s", nullable("number")}});
  s["TransferList"] = list_of("transfers", "Transfer");
  return s;
}

json operation(const Operation& op) {
  json o = {{"summary", op.summary}, {"tags", {op.tag}}};
  json parameters = json::array();
  std::string path = op.path;
  for (std::size_t at = path.find('{'); at != std::string::npos; at = path.find('{', at + 1)) {
    const std::string name = path.substr(at + 1, path.find('}', at) - at - 1);
    parameters.push_back({{"name", name},
                          {"in", "path"},
                          {"required", true},
                          {"schema", type(name == "id" ? "integer" : "string")}});
  }
  for (const Param& q : op.query) {
    parameters.push_back({{"name", q.name},
                          {"in", "query"},
                          {"required", false},
                          {"description", q.description},
                          {"schema", type(q.type)}});
  }
  if (!parameters.empty()) o["parameters"] = parameters;
  if (op.body != Body::none) {
    json content;
    if (op.body == Body::document) {
      content["application/yaml"] = {{"schema", ref(op.body_schema)}};
    }
    content["application/json"] = {{"schema", ref(op.body_schema)}};
    o["requestBody"] = {{"required", op.body != Body::json_optional}, {"content", content}};
  }
  json ok = {{"description", "success"}};
  switch (op.answer) {
    case Answer::json:
      ok["content"]["application/json"] = {{"schema", ref(op.ok_schema)}};
      break;
    case Answer::text:
      ok["content"]["text/plain"] = {{"schema", type("string")}};
      break;
    case Answer::html_or_file:
      ok["content"]["text/html"] = {{"schema", type("string")}};
      break;
    case Answer::metrics:
      ok["content"]["text/plain; version=0.0.4"] = {{"schema", type("string")}};
      break;
  }
  json responses = {{std::to_string(op.ok), ok}};
  std::vector<int> errors = op.errors;
  if (!op.open) {
    errors.push_back(401);
    errors.push_back(403);
    // A change over its caller's rate (server.rate_limits).
    if (std::string_view(op.method) != "GET") errors.push_back(429);
  }
  if (op.body != Body::none) errors.push_back(415);
  for (int status : errors) {
    responses[std::to_string(status)] = {{"$ref", "#/components/responses/Problem"}};
  }
  o["responses"] = responses;
  if (op.open) o["security"] = json::array();
  return o;
}

json build() {
  json paths = json::object();
  for (const Operation& op : operations()) {
    std::string method = op.method;
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    paths[op.path][method] = operation(op);
  }
  return {
      {"openapi", "3.1.0"},
      {"info",
       {{"title", "orchestrate"},
        {"version", "1"},
        {"description", "The REST API of orchestrate serve; docs/rest-api.md has the details."}}},
      {"paths", paths},
      {"security", json::array({{{"bearer", json::array()}}})},
      {"components",
       {{"securitySchemes",
         {{"bearer",
           {{"type", "http"},
            {"scheme", "bearer"},
            {"description", "an API token (orchestrate token create NAME --role R)"}}}}},
        {"responses",
         {{"Problem",
           {{"description", "an error, as RFC 9457 problem details"},
            {"content", {{"application/problem+json", {{"schema", ref("Problem")}}}}}}}}},
        {"schemas", schemas()}}},
  };
}

}  // namespace

const json& openapi_document() {
  static const json doc = build();
  return doc;
}

void add_openapi_route(Router& router) {
  router.add("GET", "/api/v1/openapi.json", [](const HttpRequest&, const PathParams&) {
    return json_response(200, openapi_document());
  });
}

}  // namespace orch
