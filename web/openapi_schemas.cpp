#include "web/openapi_schemas.h"

#include <utility>
#include <vector>

namespace orch {

using nlohmann::json;

json schema_ref(const std::string& name) {
  return {{"$ref", "#/components/schemas/" + name}};
}

namespace {

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
  return object({{key, {{"type", "array"}, {"items", schema_ref(item)}}}}, {key});
}

}  // namespace

// function-length: table
json openapi_schemas() {
  json s;
  s["Problem"] = object({{"type", type("string")},
                         {"title", type("string")},
                         {"status", type("integer")},
                         {"detail", type("string", "what went wrong and what to do")}},
                        {"title", "status", "detail"});
  s["Object"] = {{"type", "object"}};
  s["OpenApiDocument"] = object({{"openapi", type("string")},
                                 {"info", {{"type", "object"}}},
                                 {"paths", {{"type", "object"}}},
                                 {"components", {{"type", "object"}}}},
                                {"openapi", "info", "paths"});
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
  s["CodeArchive"] = object({{"sha256", type("string", "the archive's SHA-256, lowercase hex")},
                             {"bytes", type("integer", "the archive's size")}},
                            {"sha256", "bytes"});
  s["CodeArchiveBody"] = {{"type", "string"},
                          {"format", "binary"},
                          {"description", "a ustar archive of a workdir (docs/config.md)"}};
  s["PushedRecord"] = {
      {"type", "object"},
      {"properties",
       {{"seq", type("integer", "the task's record number: from 1, rising")},
        {"event", type("string", "start, heartbeat, progress, checkpoint, exit, fault, ...")},
        {"at_ms", type("integer", "the agent's clock")}}},
      {"required", {"seq", "event", "at_ms"}},
      {"description", "a line of the agent's event file (agents/README.md) with its seq"}};
  s["PushedRecords"] = object(
      {{"rank", type("integer", "the task's rank in the gang")},
       {"node", type("string", "the node the agent runs on")},
       {"records", {{"type", "array"}, {"items", schema_ref("PushedRecord")}, {"maxItems", 256}}}},
      {"rank", "records"});
  s["PushedRecordsStored"] =
      object({{"stored", type("integer", "records of the batch newly stored")},
              {"last_seq", type("integer", "the highest seq the server holds for the task")}},
             {"stored", "last_seq"});
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
  s["ClustersDocument"] = {{"type", "object"},
                           {"description", "a clusters file: {clusters: [...]} (docs/config.md)"}};
  s["Reason"] = object({{"reason", type("string")}});
  s["Outage"] = object({{"down", type("boolean")}}, {"down"});
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
  s["JobSpec"] = object({{"name", type("string")},
                         {"command", type("string")},
                         {"resources", {{"type", "object"}}},
                         {"env", {{"type", "object"}}},
                         {"secret_env", {{"type", "object"}}},
                         {"team", type("string")},
                         {"group", type("string")},
                         {"sweep", {{"type", "object"}}},
                         {"after",
                          {{"type", "array"},
                           {"description",
                            "jobs this one waits for (docs/config.md, \"Dependencies\")"},
                           {"items",
                            object({{"job", type("string", "a job's name (the newest of that "
                                                           "name) or its id")},
                                    {"state", {{"type", "string"},
                                               {"enum", {"succeeded", "ended"}},
                                               {"default", "succeeded"}}},
                                    {"id", type("integer", "the job's id, resolved at submit")}},
                                   {"job"})}}}},
                        {"name", "command"});
  s["JobSpec"]["description"] = "a job spec in YAML or JSON (docs/config.md)";
  s["Submitted"] = object({{"id", type("integer")},
                           {"name", type("string")},
                           {"state", type("string")},
                           {"group", type("string")},
                           {"jobs", {{"type", "array"}, {"items", schema_ref("SubmittedPoint")}}}});
  s["SubmittedPoint"] =
      object({{"id", type("integer")}, {"name", type("string")}, {"state", type("string")}});
  s["Attempt"] = object({{"no", type("integer")},
                         {"cluster", type("string")},
                         {"state", type("string")},
                         {"cause", type("string")},
                         // What failed (lines joined with "\n"); "" when it did not fail.
                         {"error_excerpt", type("string")},
                         // Why it was stopped before it launched (issue 42); "" when it launched.
                         {"not_launched", type("string")},
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
  add_read_schemas(s);
  return s;
}

}  // namespace orch
