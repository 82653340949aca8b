#pragma once
// The real ApiBackend, its three parts (JobsApi, HealthApi, DataApi) in one object: reads
// through a pool of its own store connections (WAL: reads never block the brain, nor one
// another), sends commands to the brain loop and waits a bounded time for the reply, and asks
// site adapters for logs.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/brain/cluster_history.h"
#include "scheduler/cluster_port.h"
#include "scheduler/common/clock.h"
#include "scheduler/health/node_rate.h"
#include "scheduler/lifecycle/attempt_cost.h"
#include "scheduler/runtime/brain_loop.h"
#include "scheduler/secrets/secret_registry.h"
#include "scheduler/spec/cluster_registry.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/reader_pool.h"
#include "scheduler/store/store_reader.h"
#include "web/api_backend.h"
#include "web/backend/revision_cache.h"
#include "web/code_api.h"

namespace orch {

// How many points each attempt of a series gets (scheduler_backend_series.cpp): all its buckets
// when every attempt's fit in max_points; else shares in proportion to their buckets, summing to
// at most max_points, an attempt with buckets getting at least one while any are left.
std::vector<std::int64_t> share_series_points(const std::vector<std::int64_t>& buckets,
                                              std::int64_t max_points);

class SchedulerBackend final : public ApiBackend {
 public:
  // Reads through the pool's connections, as many at once as the pool allows.
  SchedulerBackend(std::unique_ptr<ReaderPool> readers, BrainLoop& loop,
                   const std::vector<ClusterSpec>& clusters,
                   std::map<std::string, ClusterPort*> ports, const Clock& clock);
  // Reads through this one connection (tests).
  SchedulerBackend(std::unique_ptr<StoreReader> reader, BrainLoop& loop,
                   const std::vector<ClusterSpec>& clusters,
                   std::map<std::string, ClusterPort*> ports, const Clock& clock);

  // Clusters and jobs (JobsApi).
  Result<nlohmann::json> list_clusters() override;
  Result<nlohmann::json> cluster_nodes(const std::string& cluster, int event_limit) override;
  Result<JsonText> list_jobs(const JobFilter& filter) override;
  Result<JsonText> get_job(std::int64_t id) override;
  Result<nlohmann::json> job_attempts(std::int64_t id) override;
  Result<nlohmann::json> job_events(std::int64_t id) override;
  Result<nlohmann::json> explain_job(std::int64_t id) override;
  Result<nlohmann::json> submit_job(const std::string& body, const std::string& source,
                                    const Submitter& who) override;
  Result<nlohmann::json> cancel_job(std::int64_t id, const std::string& only_owner) override;
  Result<std::string> job_logs(std::int64_t id, const LogRequest& request) override;
  Result<nlohmann::json> set_cluster_outage(const std::string& cluster, bool down) override;

  // Health (HealthApi; scheduler_backend_health.cpp).
  Result<nlohmann::json> list_nodes(const NodeFilter& filter) override;
  Result<nlohmann::json> set_node_state(const std::string& cluster, const std::string& node,
                                        bool quarantine, const std::string& reason) override;
  Result<nlohmann::json> set_cluster_admission(const std::string& cluster, const std::string& to,
                                               const std::string& reason) override;
  Result<nlohmann::json> reload_clusters() override;
  // What reload_clusters runs (the composition root's, which knows the file); unset: unsupported.
  void set_reload(std::function<Result<nlohmann::json>()> reload) { reload_ = std::move(reload); }
  Result<nlohmann::json> add_clusters(const std::string& document,
                                      const std::string& source) override;
  // What add_clusters runs (the composition root's, which starts the sites); unset: unsupported.
  void set_add(std::function<Result<nlohmann::json>(const std::string&, const std::string&)> add) {
    add_ = std::move(add);
  }
  // Metrics (MetricsApi; scheduler_backend_metrics.cpp).
  Result<MetricsSnapshot> metrics() override;
  // When each cluster's site last answered, ms since the epoch (the composition root's, which
  // has the site workers); unset: /metrics leaves the ages out.
  void set_site_answers(std::function<std::map<std::string, std::int64_t>()> answers) {
    site_answers_ = std::move(answers);
  }
  // A cluster that joined the running server, with its adapter (which must outlive this).
  void cluster_joined(const ClusterSpec& spec, ClusterPort* port);
  // Support tickets (scheduler_backend_tickets.cpp).
  Result<nlohmann::json> open_ticket(const TicketRequest& request) override;
  Result<nlohmann::json> list_tickets(const std::string& cluster, const std::string& state,
                                      int limit) override;
  Result<nlohmann::json> get_ticket(std::int64_t id) override;
  Result<nlohmann::json> note_ticket(std::int64_t id, const std::string& text,
                                     bool from_provider) override;
  Result<nlohmann::json> close_ticket(std::int64_t id, const std::string& resolution) override;
  Result<nlohmann::json> check_cluster(const std::string& cluster) override;
  Result<nlohmann::json> start_burn_in(const std::string& cluster) override;
  Result<nlohmann::json> cluster_probes(const std::string& cluster, const std::string& node,
                                        int limit) override;
  Result<nlohmann::json> provider_report(int window_days) override;
  // Cost (issue 45; scheduler_backend_cost.cpp).
  Result<nlohmann::json> cost_report(const CostQuery& query) override;
  Result<nlohmann::json> job_mfu(std::int64_t id) override;
  // scheduler_backend_series.cpp (issue 41).
  Result<JsonText> job_series(std::int64_t id, int max_points) override;

  // Checkpoints and data (DataApi; scheduler_backend_data.cpp).
  Result<nlohmann::json> job_checkpoints(std::int64_t id) override;
  Result<nlohmann::json> list_datasets() override;
  Result<nlohmann::json> register_dataset(const std::string& name, const std::string& cluster,
                                          const std::string& path) override;
  Result<nlohmann::json> replicate_data(const ReplicateRequest& request) override;
  Result<nlohmann::json> list_transfers(const TransferFilter& filter) override;
  Result<nlohmann::json> get_transfer(std::int64_t id) override;
  Result<nlohmann::json> transfer_throughput(int minutes) override;  // ..._transfers.cpp
  Result<nlohmann::json> start_audit(const std::string& cluster) override;

  // Secrets (SecretsApi; scheduler_backend_secrets.cpp), over the registry the composition root
  // gives (it must outlive this); none: every secret route and a spec naming one is refused.
  void set_secrets(SecretRegistry* secrets) { secrets_ = secrets; }
  Result<nlohmann::json> list_secrets() override;
  Result<nlohmann::json> set_secret(const std::string& name, const std::string& value,
                                    const std::vector<std::string>& teams,
                                    const std::string& by) override;
  Result<nlohmann::json> grant_secret(const std::string& name,
                                      const std::vector<std::string>& teams,
                                      const std::string& by) override;
  Result<nlohmann::json> delete_secret(const std::string& name) override;

  // The server's workdir archives (scheduler_backend_code.cpp; it must outlive this); none: a
  // spec with `workdir:` is refused.
  void set_code(CodeApi* code) { code_ = code; }

 private:
  // The job as Store::job_listing reads it (resources only); its stored spec into *spec if asked.
  Result<JobRow> find_job(StoreReader& reader, std::int64_t id, nlohmann::json* spec = nullptr);
  // A job's fields in GET /jobs (no I/O): its row, its attempts, its latest checkpoint if any.
  nlohmann::json job_summary(const JobRow& job, const std::vector<AttemptRow>& attempts,
                             const CheckpointRow* latest_checkpoint) const;
  const ClusterSpec* spec_of(const std::string& cluster) const;
  // A node's standing against its cluster's quarantine rule (GET /nodes and the cluster's
  // nodes): counted failures, how many quarantine, what the next one triggers.
  // With its rate against its peers' (scheduler/health/node_rate.h, cluster_rate_verdicts).
  Result<nlohmann::json> node_standing(StoreReader& reader, const ClusterSpec& spec,
                                       const NodeRow& node, const RateVerdict& rate) const;
  // invalid naming the configured clusters when cluster is not one of them (a body's content).
  std::optional<Error> check_configured(const std::string& cluster) const;
  // Young's checkpoint interval for the job on its latest attempt's cluster, from that
  // cluster's history (the numbers placement uses); null when the job never ran or its cluster
  // is no longer configured.
  Result<nlohmann::json> checkpoint_advice(StoreReader& reader, const JobRow& job,
                                           const AttemptRow* last_attempt);

  // GET /jobs/{id} of a job, less its checkpoint advice (which follows the clusters' history,
  // not the job): the body's text without its closing brace, and what the advice is made of.
  struct JobView {
    std::string open_text;
    JobRow job;
    std::optional<AttemptRow> last_attempt;
  };
  static JsonText with_advice(const JobView& view, const nlohmann::json& advice);
  // Reads and renders a job's view, keeping it when it does not change with the clock.
  Result<JobView> job_view(StoreReader& reader, std::int64_t id);
  // A read connection for a request about job id: not_found when there is no such job.
  Result<ReaderPool::Lease> job_reader(std::int64_t id);

  // Cost (issue 45; scheduler_backend_cost.cpp). The price of a configured, priced cluster
  // (null otherwise), and the fleet's currency ("" when no cluster has a price).
  std::function<const PriceSpec*(const std::string&)> price_lookup() const;
  std::string currency() const;
  // What the live attempts cost so far, as tally rows of this month with their jobs' teams.
  Result<std::vector<CostTallyRow>> live_cost_rows(StoreReader& reader, Millis now) const;
  // Each attempt that ended at or after since_ms or is live, priced (read through the ended
  // index: costs the attempts of those jobs).
  Result<std::vector<AttemptCost>> attempt_costs_since(StoreReader& reader, Millis since_ms,
                                                       Millis now) const;
  // The all-time tally by (team, cluster, kind) with the live attempts added (/metrics).
  Result<std::vector<CostTallyRow>> cost_totals_now(StoreReader& reader) const;
  // GET /reports/cost's answer from its rows by key (labels: a job row's id, name and team).
  nlohmann::json cost_answer(const std::string& by, const std::map<std::string, CostSplit>& by_key,
                             const std::map<std::string, nlohmann::json>& labels, Millis from,
                             Millis now) const;
  // A scorecard's cost over these clusters: the split, currency, useful GPU-hours per 1,000.
  nlohmann::json card_cost(const std::vector<std::string>& clusters,
                           const std::map<std::string, CostSplit>& by_cluster) const;

  std::unique_ptr<ReaderPool> readers_;
  BrainLoop& loop_;
  SecretRegistry* secrets_ = nullptr;
  Result<SecretRegistry*> registry() const;
  CodeApi* code_ = nullptr;
  // Gives a spec with `workdir:` the archive the submit named, once this user uploaded it.
  Result<void> bind_workdir(JobSpec& spec, const Submitter& who) const;
  // The adapter of that cluster, or null.
  ClusterPort* port_of(const std::string& cluster) const;

  ClusterRegistry clusters_;
  std::function<Result<nlohmann::json>()> reload_;
  std::function<std::map<std::string, std::int64_t>()> site_answers_;
  std::function<Result<nlohmann::json>(const std::string&, const std::string&)> add_;
  mutable std::mutex ports_mu_;
  std::map<std::string, ClusterPort*> ports_;
  const Clock& clock_;
  HistoryCache histories_;
  RevisionCache<std::string> listings_;  // GET /jobs rows
  RevisionCache<JobView> views_;         // GET /jobs/{id}
};

}  // namespace orch
