#include "scheduler/runtime/site_worker.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "scheduler/brain/spare_pool.h"
#include "scheduler/model/launch_request_json.h"
#include "scheduler/model/log_tag.h"
#include "scheduler/runtime/fault_points.h"
#include "scheduler/runtime/resume_check.h"
#include "scheduler/runtime/storage_worker.h"

namespace orch {

void parse_output_lines(const std::vector<std::string>& lines, std::vector<ProgressLine>& reports,
                        std::vector<std::string>& bad_lines) {
  for (const auto& line : lines) {
    // A gang's task tags its lines ("[node/rank] ", log_tag.h): the protocol line follows it.
    auto parsed = parse_progress_line(strip_log_tag(line));
    if (!parsed) continue;
    if (parsed->ok()) {
      reports.push_back(parsed->value());
    } else {
      std::string shown = line.size() > 200 ? line.substr(0, 200) + "..." : line;
      bad_lines.push_back(parsed->error().message + " in: " + shown);
    }
  }
}

std::optional<std::string> tail_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  // A gang's task's tag ("[node/rank] ", log_tag.h) stays on the kept line; what follows it is
  // judged.
  std::string_view text;
  const bool tagged = split_log_tag(line, &text).has_value();
  const std::string_view tag = line.substr(0, line.size() - text.size());
  // A progress bar redraws itself with carriage returns: keep what a terminal would show.
  if (auto cr = text.rfind('\r'); cr != std::string_view::npos) text.remove_prefix(cr + 1);
  if (text.starts_with(kProgressPrefix)) return std::nullopt;
  if (text.find_first_not_of(" \t") == std::string_view::npos) return std::nullopt;
  std::string kept = tagged ? std::string(tag) : std::string();
  kept += text;
  if (kept.size() > kTailLineBytes) kept.resize(kTailLineBytes);
  return kept;
}

std::vector<std::string> tail_lines(std::string_view text, bool partial_first) {
  std::deque<std::string> kept;
  bool first = true;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (std::exchange(first, false) && partial_first) continue;
    if (auto l = tail_line(line)) {
      kept.push_back(std::move(*l));
      if (kept.size() > kTailLines) kept.pop_front();
    }
  }
  return {kept.begin(), kept.end()};
}

namespace {

bool same_inventory(const SiteInventory& a, const SiteInventory& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeInfo& x = a.nodes[i];
    const NodeInfo& y = b.nodes[i];
    if (x.name != y.name || x.gpus != y.gpus || x.healthy != y.healthy || x.reason != y.reason ||
        x.gpus_busy != y.gpus_busy) {
      return false;
    }
  }
  return true;
}

// Why a launch is handed back: the best checkpoint that passed the check at `site` is below the
// brain's resume floor.
std::string below_floor_message(const std::string& site, const LaunchRequest& request,
                                const ResumeChoice& resume) {
  return "not launched: the best checkpoint that passed the check at " + site + " is " +
         (resume.checkpoint_id ? "step " + std::to_string(resume.step) : std::string("none")) +
         ", below step " + std::to_string(*request.resume_floor_step) + " (" +
         request.resume_floor_reason + ")";
}

}  // namespace

SiteWorker::SiteWorker(ClusterSpec spec, ClusterPort& port, std::unique_ptr<StoreReader> reader,
                       Post post)
    : spec_(std::move(spec)), port_(port), reader_(std::move(reader)), post_(std::move(post)) {}

SiteWorker::~SiteWorker() {
  stop();
}

void SiteWorker::start() {
  loop_.start([this] { run_once(); }, std::chrono::milliseconds(spec_.poll_interval_ms));
}

void SiteWorker::stop() {
  loop_.stop();
}

void SiteWorker::wake() {
  loop_.wake();
}

void SiteWorker::request_preflight() {
  preflight_due_.store(true);
  wake();
}

void SiteWorker::preflight_if_due() {
  const auto now = std::chrono::steady_clock::now();
  const bool retry =
      preflight_failed_ && last_preflight_ && now - *last_preflight_ >= kPreflightRetry;
  if (!preflight_due_.exchange(false) && !retry) return;
  last_preflight_ = now;
  std::vector<PreflightCheck> checks = port_.preflight();
  const bool failed_before = preflight_failed_;
  preflight_failed_ = first_failure(checks) != nullptr;
  // A provider with nothing to check tells the brain nothing new.
  if (checks.empty() && !failed_before && !std::exchange(launch_misconfigured_, false)) return;
  post_(PreflightObserved{spec_.name, std::move(checks)});
}

void SiteWorker::run_once() {
  ++round_;
  preflight_if_due();
  if (!execute_actions()) return;
  poll();
}

void SiteWorker::note_reachable(bool reachable, const std::string& message) {
  if (reachable) {
    last_answer_ms_.store(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count(),
                          std::memory_order_relaxed);
  }
  if (reachable_ == reachable) return;
  // A site back from silence is checked again at once: its failed preflight may have been the
  // outage itself (the login node's port closed), not its configuration.
  if (reachable && reachable_.has_value() && preflight_failed_) preflight_due_.store(true);
  reachable_ = reachable;
  if (reachable) {
    post_(SiteReachable{spec_.name});
  } else {
    post_(SiteUnreachable{spec_.name, message});
  }
}

bool SiteWorker::execute_actions() {
  auto pending = reader_->pending_actions(spec_.name);
  if (!pending) return true;  // a busy database is not the site's fault; try next round
  std::set<std::int64_t> still_pending;
  for (const auto& a : *pending) still_pending.insert(a.id);
  // Forget posted actions the brain has since marked done, or left pending for too long.
  for (auto it = posted_.begin(); it != posted_.end();) {
    bool forget = !still_pending.count(it->first) || round_ - it->second > kRetryRounds;
    it = forget ? posted_.erase(it) : std::next(it);
  }
  std::erase_if(probed_, [&](std::int64_t id) { return !still_pending.count(id); });
  for (const auto& action : *pending) {
    if (posted_.count(action.id) || probed_.count(action.id)) continue;
    if (action.kind == ActionKind::launch) {
      if (!execute_launch(action)) return false;
    } else if (action.kind == ActionKind::probe) {
      if (!execute_probe(action)) return false;
    } else if (is_storage_action(action.kind)) {
      continue;  // the site's storage worker's
    } else if (action.kind == ActionKind::signal) {
      const std::string sig =
          action.payload.is_object() ? action.payload.value("signal", std::string("USR1")) : "USR1";
      auto r = port_.signal(action.token, sig);
      if (!r.ok() && r.error().kind == ErrorKind::unreachable) {
        note_reachable(false, r.error().message);
        return false;
      }
      posted_[action.id] = round_;
      post_(CancelCompleted{action.id, action.token, r, true});
    } else {
      auto r = port_.cancel(action.token);
      if (!r.ok() && r.error().kind == ErrorKind::unreachable) {
        note_reachable(false, r.error().message);
        return false;
      }
      posted_[action.id] = round_;
      post_(CancelCompleted{action.id, action.token, r});
    }
  }
  return true;
}

bool SiteWorker::execute_launch(const OutboxRow& action) {
  auto request = launch_request_from_json(action.payload);
  if (!request) {
    posted_[action.id] = round_;
    post_(LaunchCompleted{action.id, action.token, request.error(), false});
    return true;
  }
  // Cancelled before it started: do not start it just to stop it.
  if (auto attempt = reader_->attempt_by_token(action.token);
      attempt && *attempt &&
      ((*attempt)->cancel_requested || (*attempt)->state == AttemptState::exited)) {
    posted_[action.id] = round_;
    post_(LaunchCompleted{action.id, action.token,
                          make_error(ErrorKind::conflict, "cancelled before it was launched"),
                          false});
    return true;
  }
  // The resume check comes first: it chooses the checkpoint the launch passes in its env.
  ResumeChoice resume;
  if (!request->resume_candidates.empty()) {
    auto checked = check_resume_candidates(port_, request->resume_candidates);
    if (!checked) {
      note_reachable(false, checked.error().message);
      return false;
    }
    resume = std::move(*checked);
    const std::int64_t from = resume.checkpoint_id ? resume.step : 0;
    if (request->resume_floor_step && from < *request->resume_floor_step) {
      // What passed the check loses more than the brain's copy of a newer one would: hand the
      // launch back, with what the check found, so the brain stages that copy first.
      resume.bounced = true;
      posted_[action.id] = round_;
      post_(LaunchCompleted{
          action.id, action.token,
          make_error(ErrorKind::conflict, below_floor_message(spec_.name, *request, resume)), false,
          std::move(resume)});
      return true;
    }
    if (resume.checkpoint_id) {
      request->env[request->resume_env] = resume.path;
      request->on_node = resume.node;  // a node's own copy is read there only
    } else {
      request->env.erase(request->resume_env);
    }
  }
  if (!fill_secrets(action, *request)) return true;
  // One call to the site. Launch is idempotent per token (cluster_port.h): a token the site
  // already has was launched before a crash, and comes back adopted instead of started again.
  auto launched = port_.launch(*request);
  if (launched && !launched->adopted) fault_point("kill-after-launch");
  if (!launched && launched.error().kind == ErrorKind::unreachable) {
    note_reachable(false, launched.error().message);
    return false;
  }
  if (launched) note_reachable(true);
  // The server's own configuration is wrong there: the preflight says what, at the next round.
  if (!launched && launched.error().kind == ErrorKind::misconfigured) {
    launch_misconfigured_ = true;
    preflight_due_.store(true);
  }
  posted_[action.id] = round_;
  // An adopted run may have been launched with another checkpoint than the one just chosen: it
  // reports no resume choice.
  const bool adopted = launched && launched->adopted;
  post_(LaunchCompleted{action.id, action.token, launched, adopted,
                        adopted ? ResumeChoice{} : std::move(resume)});
  return true;
}

bool SiteWorker::fill_secrets(const OutboxRow& action, LaunchRequest& request) {
  if (request.secret_refs.empty()) return true;
  auto values = secrets_ != nullptr
                    ? secrets_->resolve(request.secret_refs, request.team)
                    : Result<std::map<std::string, std::string>>(make_error(
                          ErrorKind::invalid,
                          "this server has no secret registry: a job that names secrets cannot be "
                          "launched"));
  if (!values) {
    posted_[action.id] = round_;
    post_(LaunchCompleted{action.id, action.token, values.error(), false});
    return false;
  }
  request.secret_env = std::move(*values);
  return true;
}

bool SiteWorker::execute_probe(const OutboxRow& action) {
  // Remembered before the call: whatever it answers, this process does not run it again.
  probed_.insert(action.id);
  if (is_fabric_step(action.payload)) return execute_fabric(action);
  auto request = probe_request_from_json(action.payload);
  if (!request) {
    post_(ProbeCompleted{action.id, spec_.name, action.token, request.error()});
    return true;
  }
  auto results = port_.probe_nodes(*request);
  post_(ProbeCompleted{action.id, spec_.name, action.token, results});
  if (!results && results.error().kind == ErrorKind::unreachable) {
    note_reachable(false, results.error().message);
    return false;
  }
  if (results) note_reachable(true);
  return true;
}

void SiteWorker::remember_lines(const std::string& token, const std::vector<std::string>& lines) {
  std::deque<std::string>& tail = tails_[token];
  for (const auto& line : lines) {
    if (auto l = tail_line(line)) {
      tail.push_back(std::move(*l));
      if (tail.size() > kTailLines) tail.pop_front();
    }
  }
}

std::vector<std::string> SiteWorker::exit_tail(const std::string& token,
                                               std::uint64_t next_offset) {
  std::deque<std::string>& tail = tails_[token];
  if (tail.empty()) {
    // This worker saw none of its lines (they were read before a restart, or the exit came
    // with nothing new): read back the end of the output up to where reading stopped.
    std::uint64_t from = next_offset > kTailReadBytes ? next_offset - kTailReadBytes : 0;
    if (auto text = port_.read_output(token, from, kTailReadBytes)) {
      auto lines = tail_lines(*text, from > 0);
      tail.assign(lines.begin(), lines.end());
    }
  }
  return {tail.begin(), tail.end()};
}

bool SiteWorker::post_holders(const std::vector<Result<RunObservation>>& answers, std::size_t first,
                              const std::vector<std::string>& holders) {
  for (std::size_t i = 0; i < holders.size() && first + i < answers.size(); ++i) {
    const Result<RunObservation>& obs = answers[first + i];
    if (!obs) {
      if (obs.error().kind != ErrorKind::unreachable) continue;
      note_reachable(false, obs.error().message);
      return false;
    }
    AttemptObserved e;
    e.cluster = spec_.name;
    e.token = holders[i];
    e.phase = obs->phase;
    e.exit = obs->exit;
    e.nodes = obs->nodes;
    post_(std::move(e));
  }
  return true;
}

bool SiteWorker::poll() {
  // Live attempts, and ended ones the site has not yet confirmed gone (see AttemptRow::site_done).
  // Their tokens and states: a gang's node list is not expanded on every poll.
  auto live = reader_->watched_attempts(spec_.name, false);
  if (!live) return true;
  // Offsets of attempts no longer watched are forgotten.
  std::set<std::string> tokens;
  for (const auto& a : *live) tokens.insert(a.token);
  std::erase_if(offsets_, [&](const auto& kv) { return !tokens.count(kv.first); });
  std::erase_if(tails_, [&](const auto& kv) { return !tokens.count(kv.first); });
  // One question for the whole round (Slurm: one squeue for every attempt), answered in order.
  std::vector<ObserveRequest> requests;
  requests.reserve(live->size());
  for (const auto& a : *live) requests.push_back(ObserveRequest{a.token, offsets_[a.token]});
  // The hot spares' holders, in the same question (their output is never read).
  std::vector<std::string> holders;
  if (may_hold_spares(spec_)) {
    if (auto spares = reader_->live_spares(spec_.name)) {
      for (const auto& s : *spares) {
        if (s.state == SpareState::burning_in) continue;
        holders.push_back(s.token);
        requests.push_back(ObserveRequest{s.token, 0});
      }
    }
  }
  const bool called = !requests.empty();
  std::vector<Result<RunObservation>> answers;
  if (called) answers = port_.observe_many(requests);
  if (!post_holders(answers, live->size(), holders)) return false;
  bool ended = false;  // an attempt ended: perhaps a node with it, so look at the nodes now
  for (std::size_t i = 0; i < answers.size() && i < live->size(); ++i) {
    const AttemptRow& a = (*live)[i];
    Result<RunObservation>& obs = answers[i];
    if (!obs) {
      if (obs.error().kind == ErrorKind::unreachable) {
        note_reachable(false, obs.error().message);
        return false;
      }
      continue;  // one attempt's trouble (a file it cannot read) does not stop the others
    }
    note_reachable(true);
    offsets_[a.token] = obs->next_offset;
    ended = ended || (obs->phase == RunPhase::exited && a.state != AttemptState::exited);
    AttemptObserved e;
    e.cluster = spec_.name;
    e.token = a.token;
    e.phase = obs->phase;
    e.exit = obs->exit;
    e.nodes = obs->nodes;
    e.alerts = obs->alerts;
    if (obs->phase == RunPhase::queued) e.waiting = obs->waiting;
    parse_output_lines(obs->new_lines, e.reports, e.bad_lines);
    remember_lines(a.token, obs->new_lines);
    if (obs->phase == RunPhase::exited) e.log_tail = exit_tail(a.token, obs->next_offset);
    post_(std::move(e));
    // A cancel the job has not yet obeyed is repeated: providers escalate (SIGKILL) after grace.
    if (a.cancel_requested && obs->phase == RunPhase::running) (void)port_.cancel(a.token);
  }
  // The inventory: at once when nothing else was asked or an attempt ended (site_worker.h).
  return refresh_inventory(!called || ended);
}

bool SiteWorker::refresh_inventory(bool due) {
  const bool node_out =
      last_inventory_ && std::any_of(last_inventory_->nodes.begin(), last_inventory_->nodes.end(),
                                     [](const NodeInfo& n) { return !n.healthy; });
  if (!due && !node_out && rounds_since_inventory_ < kInventoryEvery && last_inventory_) {
    ++rounds_since_inventory_;
    return true;
  }
  rounds_since_inventory_ = 0;
  auto inv = port_.inventory();
  if (!inv) {
    if (inv.error().kind == ErrorKind::unreachable) {
      note_reachable(false, inv.error().message);
      return false;
    }
    return true;
  }
  note_reachable(true);
  if (!last_inventory_ || !same_inventory(*last_inventory_, *inv)) {
    last_inventory_ = *inv;
    post_(InventoryObserved{spec_.name, *inv});
  }
  return true;
}

}  // namespace orch
