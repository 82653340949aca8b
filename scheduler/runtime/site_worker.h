#pragma once
// One thread per site. It carries out the site's actions from the outbox (launch, cancel,
// probe; storage actions are the StorageWorker's) and polls the site's live attempts (all of them
// with one ClusterPort::observe_many per round), turning what it sees into events for the brain.
// All blocking calls to a provider (SSH, HTTP, processes) happen here, never on the brain's thread.
// It reads the store through its own connection and never writes it: every change goes through the
// brain. It keeps the last ordinary output lines of each watched attempt, and hands them to the
// brain with the attempt's exit (the failure classifier's log signatures).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "scheduler/brain/brain_event.h"
#include "scheduler/cluster_port.h"
#include "scheduler/runtime/worker_loop.h"
#include "scheduler/secrets/secret_resolver.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/store_reader.h"

namespace orch {

class SiteWorker {
 public:
  using Post = std::function<void(BrainEvent)>;

  SiteWorker(ClusterSpec spec, ClusterPort& port, std::unique_ptr<StoreReader> reader, Post post);
  ~SiteWorker();
  SiteWorker(const SiteWorker&) = delete;
  SiteWorker& operator=(const SiteWorker&) = delete;

  void start();
  void stop();
  void wake();  // the outbox may have new actions for this site
  // Runs the site's preflight at the next round (a reload of the clusters file). It also runs
  // at the first round, after a launch failed on the server's own configuration, and every
  // kPreflightRetry while the last one failed (site_worker.cpp).
  void request_preflight();
  // Where launches get the values of their secret references (must outlive the worker); none:
  // a launch that names a secret fails.
  void set_secrets(const SecretResolver* secrets) { secrets_ = secrets; }

  // One round: actions, then a poll. Public so tests can drive a worker without its thread.
  void run_once();

  // When the site last answered (wall clock, ms since the epoch); 0 before its first answer.
  // Read from any thread (/metrics shows its age).
  std::int64_t last_answer_ms() const { return last_answer_ms_.load(std::memory_order_relaxed); }
  const std::string& cluster() const { return spec_.name; }

 private:
  // false: the site did not answer; the round stops there.
  bool execute_actions();
  bool poll();
  // The inventory, asked on the first round, when `due` (an attempt ended, perhaps a node with
  // it; or there was nothing else to ask, so that an idle site's reachability stays known),
  // every kInventoryEvery rounds, and every round while a node is out of service, so that one
  // returned to service is seen at the next poll (issue 38: a job waiting for it starts a poll
  // after it is back); posted when it changed. false: the site went silent.
  bool refresh_inventory(bool due);
  // The hot spares' holders' answers (answers[first...], one per holder token): each to the
  // brain. false: the site went silent.
  bool post_holders(const std::vector<Result<RunObservation>>& answers, std::size_t first,
                    const std::vector<std::string>& holders);
  bool execute_launch(const OutboxRow& action);
  // The preflight, when due: its checks posted to the brain (PreflightObserved).
  void preflight_if_due();
  // The secrets' values, resolved now for the job's team (a grant taken back since submit stops
  // the launch) and handed to the site only (never posted or stored). false: they cannot be, and
  // the launch's failure is posted.
  bool fill_secrets(const OutboxRow& action, LaunchRequest& request);
  bool execute_probe(const OutboxRow& action);
  // A probe action whose payload is burn-in's fabric step (scheduler/model/fabric_step.h): its
  // rounds one after the other, every pair's result posted at once (site_worker_fabric.cpp).
  bool execute_fabric(const OutboxRow& action);
  void note_reachable(bool reachable, const std::string& message = {});
  // Keeps the attempt's ordinary output lines in its tail; `exited`: the tail to post, read
  // back from the site's output when this worker saw none (it started after the lines).
  void remember_lines(const std::string& token, const std::vector<std::string>& lines);
  std::vector<std::string> exit_tail(const std::string& token, std::uint64_t next_offset);

  ClusterSpec spec_;
  ClusterPort& port_;
  std::unique_ptr<StoreReader> reader_;
  Post post_;
  const SecretResolver* secrets_ = nullptr;
  std::map<std::string, std::uint64_t> offsets_;  // token -> output bytes already read
  // token -> its last kTailLines ordinary output lines, oldest first (watched tokens only).
  std::map<std::string, std::deque<std::string>> tails_;
  // Probe actions run by this process. A probe can take minutes and its row stays pending until
  // the brain has judged the result, so unlike launches and cancels it is never repeated here.
  std::set<std::int64_t> probed_;
  // Action ids posted to the brain and perhaps not yet marked done, with the round of posting.
  // One still pending kRetryRounds later is carried out again (launches and cancels are
  // idempotent per token): the brain's transaction for it may have failed.
  std::map<std::int64_t, long> posted_;
  static constexpr long kRetryRounds = 100;
  long round_ = 0;
  std::optional<bool> reachable_;
  // Rounds between inventories of a busy site whose nodes are all in service (every round while
  // one is out, so that its return is seen at once).
  static constexpr int kInventoryEvery = 60;
  int rounds_since_inventory_ = 0;
  std::optional<SiteInventory> last_inventory_;  // as last posted to the brain

  std::atomic<std::int64_t> last_answer_ms_{0};
  // The preflight: asked for (first round, reload, a misconfigured launch), and when the last
  // one ran and whether it failed (then it runs again every kPreflightRetry).
  std::atomic<bool> preflight_due_{true};
  std::optional<std::chrono::steady_clock::time_point> last_preflight_;
  bool preflight_failed_ = false;
  bool launch_misconfigured_ = false;  // since the last preflight (its answer is posted then)
  static constexpr std::chrono::seconds kPreflightRetry{60};

  WorkerLoop loop_;
};

// Splits output lines into progress reports and bad protocol lines (shared by every provider).
// A line's task tag (a gang's "[node/rank] ", scheduler/model/log_tag.h) is stripped first.
void parse_output_lines(const std::vector<std::string>& lines, std::vector<ProgressLine>& reports,
                        std::vector<std::string>& bad_lines);

// The log tail: at most kTailLines ordinary output lines per attempt, each cut to
// kTailLineBytes (of what a terminal would show: the text after its last carriage return).
// Protocol ("@orchestrate ") and blank lines are not kept, judged after a gang's task tag, which
// a kept line keeps ("[east-n0/3] Traceback ...": whose line it is).
inline constexpr std::size_t kTailLines = 64;
inline constexpr std::size_t kTailLineBytes = 2048;
// When the worker saw none of an exited attempt's output, it reads back this much of its end.
inline constexpr std::size_t kTailReadBytes = 16384;
// The lines of `text` (an output excerpt; `partial_first`: it starts mid-line, so its first line
// is dropped) that belong in a log tail, the last kTailLines of them.
std::vector<std::string> tail_lines(std::string_view text, bool partial_first);
// One output line as the tail keeps it; nullopt: not kept (protocol or blank).
std::optional<std::string> tail_line(std::string_view line);

}  // namespace orch
