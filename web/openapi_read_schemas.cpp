// The answers of the main reads, typed as the backend builds them (web/backend/*.cpp): jobs,
// clusters, nodes, transfers, datasets and the provider scorecards. Every property the backend
// always writes is required; a value that may be absent is nullable.
#include <string>
#include <utility>
#include <vector>

#include "web/openapi_schemas.h"

namespace orch {
namespace {

using nlohmann::json;

json t(const char* type) {
  return {{"type", type}};
}
json maybe(const char* type) {  // the type, or null
  return {{"type", json::array({type, "null"})}};
}
json described(json schema, const char* description) {
  schema["description"] = description;
  return schema;
}
json array_of(const json& items) {
  return {{"type", "array"}, {"items", items}};
}
json strings() {
  return array_of(t("string"));
}

// An object of the given properties, every one of them required.
json all_required(std::vector<std::pair<std::string, json>> properties) {
  json p = json::object();
  json required = json::array();
  for (auto& [name, schema] : properties) {
    required.push_back(name);
    p[name] = std::move(schema);
  }
  return {{"type", "object"}, {"properties", p}, {"required", required}};
}

json list_of(const char* key, const char* item) {
  return all_required({{key, array_of(schema_ref(item))}});
}

// GET /jobs/{id}/explain: the last placement decision, per cluster (issue 42: every filter that
// refused it, each preemption considered there and why it was or was not taken).
void add_explanation_schemas(json& s) {
  s["Refusal"] = all_required({{"filter", t("string")}, {"reason", t("string")}});
  s["PreemptionConsidered"] = all_required({{"job_id", t("integer")},
                                            {"job_name", t("string")},
                                            {"team", t("string")},
                                            {"gpus", t("integer")},
                                            {"taken", t("boolean")},
                                            {"why", t("string")}});
  s["ClusterVerdict"] = all_required(
      {{"cluster", t("string")},
       {"feasible", t("boolean")},
       {"reason", {{"type", "string"}, {"description", "the first refusal, or the score's parts"}}},
       {"score", maybe("number")},
       {"refused_by", array_of(schema_ref("Refusal"))},
       {"preemptions", array_of(schema_ref("PreemptionConsidered"))},
       {"preemptions_more",
        {{"type", "integer"}, {"description", "considered there beyond those listed"}}},
       // Issue 45: goodput and goodput per unit of money, with the price, per cluster.
       {"goodput_flops",
        described(maybe("number"), "expected useful FLOP/s there; null when not scored")},
       {"price_per_gpu_hour",
        described(maybe("number"),
                  "price of a GPU-hour there when placing decided; null without prices")},
       {"price_assumed",
        described(t("boolean"),
                  "the cluster has no price and was judged at the dearest priced one's")},
       {"currency", maybe("string")},
       {"goodput_per_cost",
        described(maybe("number"),
                  "useful FLOP one unit of money buys there; null without its own price")}});
  s["PreemptionEvent"] =
      all_required({{"at_ms", t("integer")}, {"kind", t("string")}, {"message", t("string")}});
  s["Explanation"] = {
      {"type", "object"},
      {"properties",
       {{"job_id", t("integer")},
        {"state", t("string")},
        {"reason", t("string")},
        {"priority", t("integer")},
        {"priority_class", t("string")},
        {"evaluated_at_ms", maybe("integer")},
        {"chosen", maybe("string")},
        {"objective",
         {{"enum", {"goodput", "goodput_per_cost", nullptr}},
          {"description", "what ranked the clusters (issue 45); null when none was scored"}}},
        {"clusters", array_of(schema_ref("ClusterVerdict"))},
        {"preemption", array_of(schema_ref("PreemptionEvent"))},
        {"mfu_flag", t("string")},
        {"advice_basis",
         {{"enum", {"measured", "prior", nullptr}},
          {"description",
           "what the job's checkpoint advice stands on; null before it was placed"}}}}},
      {"required",
       {"job_id", "state", "reason", "evaluated_at_ms", "chosen", "clusters", "preemption"}}};
}

void add_job_schemas(json& s) {
  s["Job"] = all_required(
      {{"id", t("integer")},
       {"name", t("string")},
       {"owner", t("string")},
       {"team", t("string")},
       {"group", t("string")},
       // Issue 42: the values of its sweep point ("LR=1e-4 --seed 1"; "" when not in a sweep),
       // its priority (and the class it came from, "" when an integer), its GPUs in all.
       {"sweep_point", t("string")},
       {"priority", t("integer")},
       {"priority_class", t("string")},
       {"state", t("string")},
       {"nodes", t("integer")},
       {"gpus_per_node", t("integer")},
       {"gpus", t("integer")},
       {"cluster", maybe("string")},
       {"attempts", t("integer")},
       {"infra_restarts", t("integer")},
       {"user_restarts", t("integer")},
       {"step", maybe("integer")},
       {"mfu", maybe("number")},
       // Why the MFU is not a measurement (a misconfigured model size or peak FLOPs); "" when fine.
       {"mfu_flag", t("string")},
       {"steps_lost", t("integer")},
       {"ettr", maybe("number")},
       {"last_checkpoint", {{"oneOf", json::array({schema_ref("CheckpointAt"), t("null")})}}},
       {"reason", t("string")},
       // What the newest failed attempt printed (its error_excerpt); "" when none failed.
       {"error_excerpt", t("string")},
       {"created_ms", t("integer")},
       {"updated_ms", t("integer")},
       // Issue 45: what its attempts' GPU-hours cost, useful and lost (live ones up to now).
       {"cost", schema_ref("PricedCost")}});
  s["CheckpointAt"] = all_required({{"step", t("integer")}, {"path", t("string")}});
  s["JobPage"] = all_required({{"jobs", array_of(schema_ref("Job"))},
                               {"next",
                                {{"type", json::array({"string", "null"})},
                                 {"description", "the cursor of the next page"}}}});
  s["JobDetail"] = {
      {"allOf", json::array({schema_ref("Job"),
                             all_required({{"spec", t("object")},
                                           {"checkpoint_advice",
                                            {{"oneOf", json::array({schema_ref("CheckpointAdvice"),
                                                                    t("null")})}}}})})}};
  // The best interval on the latest attempt's cluster by the exact renewal formula, Young's
  // beside it (issue 45); basis "prior" while it stands on the priors alone (no measured save
  // time or MTBF there yet, issue 42); what its MTBF stands on.
  s["CheckpointAdvice"] = all_required(
      {{"cluster", t("string")},
       {"basis", {{"enum", {"measured", "prior"}}}},
       {"interval_s", t("number")},
       {"young_interval_s", described(t("number"), "sqrt(2 C M), the first-order optimum")},
       {"checkpoint_cost_s", t("number")},
       {"job_mtbf_h", t("number")},
       {"mtbf_basis", {{"enum", {"prior", "mostly prior", "measured"}}}},
       {"evidence_node_hours", described(t("number"), "node-hours observed on the cluster")},
       {"node_failures", t("integer")},
       {"prior_node_hours", described(t("number"), "the MTBF prior's weight in node-hours")},
       {"ettr", described(t("number"), "the exact renewal ETTR at interval_s")},
       {"ettr_first_order", described(t("number"), "1 - C/tau - (tau/2 + R)/M at interval_s")}});
  add_explanation_schemas(s);
}

void add_cluster_schemas(json& s) {
  s["ClusterNode"] = all_required({{"name", t("string")},
                                   {"gpus", t("integer")},
                                   {"gpus_busy", t("integer")},
                                   {"cpus", t("integer")},
                                   {"memory_mb", t("integer")},
                                   {"healthy", t("boolean")},
                                   {"reason", t("string")}});
  s["SpareNode"] =
      all_required({{"node", t("string")}, {"state", t("string")}, {"since_ms", t("integer")}});
  s["Spares"] = all_required({{"wanted", t("integer")},
                              {"ready", t("integer")},
                              {"nodes", array_of(schema_ref("SpareNode"))},
                              {"gpu_hours_idle", t("number")},
                              {"taken", t("integer")},
                              {"failed_burn_in", t("integer")},
                              {"lost", t("integer")}});
  s["Cluster"] = all_required({{"name", t("string")},
                               {"vendor", t("string")},
                               {"provider", t("string")},
                               {"nodes", t("integer")},
                               {"gpus_per_node", t("integer")},
                               {"accelerator", t("string")},
                               {"peak_tflops", maybe("number")},
                               {"health", t("string")},
                               {"admission", t("string")},
                               {"admission_reason", t("string")},
                               {"promised_ms", maybe("integer")},
                               {"delivered_ms", maybe("integer")},
                               {"gpus_total", t("integer")},
                               {"gpus_used", t("integer")},
                               {"gpus_spare", t("integer")},
                               {"gpus_foreign", t("integer")},
                               {"spares", schema_ref("Spares")},
                               {"nodes_healthy", t("integer")},
                               {"node_list", array_of(schema_ref("ClusterNode"))},
                               {"message", t("string")}});
  s["ClusterList"] = list_of("clusters", "Cluster");
  s["PreflightCheck"] = all_required({{"name", t("string")},
                                      {"ok", t("boolean")},
                                      {"skipped", t("boolean")},
                                      {"why", t("string")}});
  s["ClusterCheck"] = all_required({{"cluster", t("string")},
                                    {"ok", t("boolean")},
                                    {"reason", t("string")},
                                    {"checks", array_of(schema_ref("PreflightCheck"))}});
}

// A node's standing toward quarantine (node_standing), part of every node the API lists.
std::vector<std::pair<std::string, json>> standing() {
  return {{"failures", t("integer")},
          {"failures_to_quarantine", t("integer")},
          {"window_h", t("number")},
          {"next_failure", t("string")},
          // Lemons judged by rate (issue 43, scheduler/health/node_rate.h).
          {"work_failures", t("integer")},
          {"work_gpu_hours", t("number")},
          {"rate_per_gpu_h", t("number")},
          {"cluster_rate_per_gpu_h", t("number")},
          {"rate_ratio", t("number")},
          {"rate_p_value", t("number")},
          {"lemon", t("boolean")},
          {"count_rule", t("boolean")},
          {"rate_evidence", t("string")}};
}

void add_node_schemas(json& s) {
  auto node = standing();
  for (auto& p : std::vector<std::pair<std::string, json>>{{"cluster", t("string")},
                                                           {"name", t("string")},
                                                           {"gpus", t("integer")},
                                                           {"gpus_busy", t("integer")},
                                                           {"healthy", t("boolean")},
                                                           {"reason", t("string")},
                                                           {"state", t("string")},
                                                           {"quarantines", t("integer")},
                                                           {"quarantined_at_ms", maybe("integer")},
                                                           {"state_reason", t("string")},
                                                           {"seen_ms", t("integer")}}) {
    node.push_back(std::move(p));
  }
  s["Node"] = all_required(node);
  s["NodeList"] = list_of("nodes", "Node");
  auto site_node = standing();
  for (auto& p : std::vector<std::pair<std::string, json>>{{"name", t("string")},
                                                           {"gpus", t("integer")},
                                                           {"healthy", t("boolean")},
                                                           {"reason", t("string")},
                                                           {"updated_ms", t("integer")},
                                                           {"state", t("string")}}) {
    site_node.push_back(std::move(p));
  }
  s["SiteNode"] = all_required(site_node);
  s["NodeEvent"] = all_required({{"id", t("integer")},
                                 {"at_ms", t("integer")},
                                 {"node", t("string")},
                                 {"kind", t("string")},
                                 {"message", t("string")},
                                 {"job_id", maybe("integer")},
                                 {"attempt_no", maybe("integer")},
                                 {"incident", t("string")}});
  s["ClusterNodes"] = all_required({{"cluster", t("string")},
                                    {"nodes", array_of(schema_ref("SiteNode"))},
                                    {"events", array_of(schema_ref("NodeEvent"))}});
}

void add_data_schemas(json& s) {
  s["Replica"] = all_required({{"id", t("integer")},
                               {"cluster", t("string")},
                               {"tier", {{"enum", {"site", "node"}}}},
                               {"node", maybe("string")},
                               {"path", t("string")},
                               {"state", t("string")},
                               {"detail", t("string")},
                               {"updated_ms", t("integer")},
                               {"verified_ms", maybe("integer")},
                               {"audited_ms", maybe("integer")}});
  s["Dataset"] = all_required({{"name", t("string")},
                               {"bytes", maybe("integer")},
                               {"files", maybe("integer")},
                               {"created_ms", t("integer")},
                               {"replicas", array_of(schema_ref("Replica"))}});
  s["DatasetList"] = list_of("datasets", "Dataset");
  s["Place"] = all_required({{"cluster", t("string")}, {"path", t("string")}});
  s["Transfer"] = all_required({{"id", t("integer")},
                                {"what", t("string")},
                                {"purpose", {{"enum", {"replication", "staging", "manual"}}}},
                                {"job", maybe("integer")},
                                {"step", maybe("integer")},
                                {"group", t("string")},
                                {"checkpoint", maybe("integer")},
                                {"dataset", maybe("string")},
                                {"from", schema_ref("Place")},
                                {"to", schema_ref("Place")},
                                {"state", t("string")},
                                {"why", t("string")},
                                {"bytes_total", t("integer")},
                                {"bytes_done", t("integer")},
                                {"percent", maybe("number")},
                                // running: as last reported; copied: the copy's average
                                {"rate_mb_s", maybe("number")},
                                {"average_mb_s", maybe("number")},
                                {"cap_mb_s", maybe("number")},
                                {"base_cap_mb_s", maybe("number")},
                                {"tries", t("integer")},
                                {"error", t("string")},
                                {"route", t("string")},
                                {"created_ms", t("integer")},
                                {"started_ms", maybe("integer")},
                                {"ended_ms", maybe("integer")},
                                {"next_try_ms", maybe("integer")}});
  s["TransferGroup"] =
      all_required({{"key", t("string")},
                    {"purpose", {{"enum", {"replication", "staging", "manual"}}}},
                    {"job", maybe("integer")},
                    {"label", t("string")},
                    {"transfers", array_of(t("integer"))},
                    {"states", {{"type", "object"}, {"additionalProperties", t("integer")}}},
                    {"bytes_total", t("integer")},
                    {"bytes_done", t("integer")},
                    {"rate_mb_s", maybe("number")}});
  s["TransferList"] = all_required({{"groups", array_of(schema_ref("TransferGroup"))},
                                    {"transfers", array_of(schema_ref("Transfer"))},
                                    {"next",
                                     {{"type", json::array({"string", "null"})},
                                      {"description", "the cursor of the next page"}}}});
  s["ThroughputPoint"] = all_required(
      {{"at_ms", t("integer")}, {"bytes", t("integer")}, {"bytes_per_s", t("number")}});
  s["TransferThroughput"] = all_required({{"bucket_s", t("integer")},
                                          {"minutes", t("integer")},
                                          {"bytes", t("integer")},
                                          {"points", array_of(schema_ref("ThroughputPoint"))}});
}

// Issue 45: what GPU-hours cost (web/backend/cost_values.h): the total, useful and lost (all but
// useful), and lost by kind, in GPU-hours and in money of the fleet's currency.
void add_cost_schemas(json& s) {
  std::vector<std::pair<std::string, json>> parts;
  for (const char* part : {"total", "useful", "lost", "redone", "restart", "queued", "failed"}) {
    parts.emplace_back(part, t("number"));
  }
  s["CostParts"] = all_required(parts);
  s["CostSplit"] =
      all_required({{"gpu_hours", schema_ref("CostParts")}, {"money", schema_ref("CostParts")}});
  s["PricedCost"] = {
      {"allOf",
       json::array({schema_ref("CostSplit"),
                    all_required({{"currency", described(t("string"),
                                                         "the fleet's; \"\" without prices")}})})}};
  s["CardCost"] = {
      {"allOf", json::array({schema_ref("PricedCost"),
                             all_required({{"useful_gpu_hours_per_1k",
                                            described(maybe("number"),
                                                      "useful GPU-hours 1,000 units of money "
                                                      "bought; null where nothing was paid")}})})}};
  s["CostRow"] = {
      {"allOf",
       json::array(
           {schema_ref("CostSplit"),
            {{"type", "object"},
             {"required", json::array({"key", "committed", "idle"})},
             {"properties",
              {{"key", described(t("string"), "the job's id, the team, cluster or vendor")},
               {"job", t("integer")},
               {"name", t("string")},
               {"team", t("string")},
               {"committed", described(maybe("number"),
                                       "a contract's spend over the span, used or not; null "
                                       "without one (cluster and vendor)")},
               {"idle", described(maybe("number"), "what the attempts left unused of it")}}}}})}};
  s["CostReport"] = all_required({{"by", {{"enum", {"job", "team", "cluster", "vendor"}}}},
                                  {"from_ms", described(t("integer"),
                                                        "counted from (team, cluster and vendor: "
                                                        "the start of since's UTC month)")},
                                  {"now_ms", t("integer")},
                                  {"currency", t("string")},
                                  {"rows", array_of(schema_ref("CostRow"))},
                                  {"total", schema_ref("CostSplit")}});
}

void add_report_schemas(json& s) {
  add_cost_schemas(s);
  std::vector<std::pair<std::string, json>> card = {{"name", t("string")},
                                                    {"kind", {{"enum", {"cluster", "vendor"}}}},
                                                    {"clusters", strings()},
                                                    {"availability", t("number")},
                                                    {"gpu_hours", t("number")},
                                                    {"interruptions", t("integer")},
                                                    {"io_stalls", t("integer")},
                                                    {"nodes", t("integer")},
                                                    {"quarantined_nodes", t("integer")},
                                                    {"quarantined_share", t("number")},
                                                    {"open_tickets", t("integer")},
                                                    {"tickets", t("integer")},
                                                    {"awaiting_delivery", t("boolean")}};
  for (const char* figure :
       {"interruptions_per_1k_gpu_h", "node_mtbf_h", "detection_median_s", "detection_p95_s",
        "recovery_median_s", "recovery_p95_s", "backoff_median_s", "placing_median_s",
        "site_median_s", "startup_median_s", "median_mfu", "checkpoint_save_p95_s",
        "ticket_response_median_h", "ticket_resolution_median_h", "delivery_delay_days"}) {
    card.emplace_back(figure, maybe("number"));  // null: nothing to measure in the window
  }
  card.emplace_back("cost", schema_ref("CardCost"));  // issue 45
  s["Scorecard"] = all_required(card);
  s["ProviderReport"] = all_required({{"window_start_ms", t("integer")},
                                      {"now_ms", t("integer")},
                                      {"cards", array_of(schema_ref("Scorecard"))}});
  s["Health"] = all_required({{"status", {{"const", "ok"}}}});
}

// GET /api/v1/jobs/{id}/series (issue 41): a point is a bucket of consecutive steps.
void add_series_schemas(json& s) {
  s["SeriesPoint"] = all_required({{"step", t("integer")},
                                   {"first_step", t("integer")},
                                   {"last_step", t("integer")},
                                   {"at_ms", t("integer")},
                                   {"loss", maybe("number")},
                                   {"loss_min", maybe("number")},
                                   {"loss_max", maybe("number")},
                                   {"tokens_per_s", maybe("number")},
                                   {"step_time_s", maybe("number")},
                                   {"mfu", maybe("number")}});
  s["SeriesAttempt"] = all_required({{"attempt", t("integer")},
                                     {"cluster", t("string")},
                                     {"started_ms", t("integer")},
                                     {"ended_ms", maybe("integer")},
                                     {"resumed_from_step", maybe("integer")},
                                     {"mfu_flag", t("string")},
                                     {"points", array_of(schema_ref("SeriesPoint"))}});
  s["SeriesCheckpoint"] =
      all_required({{"step", t("integer")}, {"attempt", t("integer")}, {"at_ms", t("integer")}});
  s["JobSeries"] = all_required({{"job_id", t("integer")},
                                 {"max_points", t("integer")},
                                 {"attempts", array_of(schema_ref("SeriesAttempt"))},
                                 {"checkpoints", array_of(schema_ref("SeriesCheckpoint"))}});
}

}  // namespace

void add_read_schemas(json& schemas) {
  add_series_schemas(schemas);
  add_job_schemas(schemas);
  add_cluster_schemas(schemas);
  add_node_schemas(schemas);
  add_data_schemas(schemas);
  add_report_schemas(schemas);
}

}  // namespace orch
