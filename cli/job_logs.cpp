// See job_logs.h.
#include "cli/job_logs.h"

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/output_table.h"
#include "scheduler/model/job_state.h"

namespace orch {
namespace {

using nlohmann::json;

// Reads of one attempt's log in one round of a follow (1 MiB each), so events and the next
// attempt are not held up by a job that writes faster than we read; a read that does not follow
// goes on until everything so far is printed.
constexpr int kReadsPerRound = 16;
constexpr int kReadsAtMost = 1 << 16;

std::string job_path(std::int64_t id) {
  return "/api/v1/jobs/" + std::to_string(id);
}

std::string job_state(const json& job) {
  const json& state = member(job, "state");
  return state.is_string() ? state.get<std::string>() : std::string();
}

bool terminal(const json& job) {
  auto parsed = parse_job_state(job_state(job));
  return parsed && is_terminal(*parsed);
}

int attempt_count(const json& job) {
  const json& n = member(job, "attempts");
  return n.is_number_integer() ? n.get<int>() : 0;
}

// The job's task count: nodes x resources.tasks_per_node (1 when the spec does not say).
int task_count(const json& job) {
  const json& nodes = member(job, "nodes");
  const json& per_node = member(member(member(job, "spec"), "resources"), "tasks_per_node");
  const int n = nodes.is_number_integer() ? nodes.get<int>() : 1;
  return n * (per_node.is_number_integer() ? per_node.get<int>() : 1);
}

// One job's log and events, followed or read once.
class Follower {
 public:
  Follower(const ClientOptions& o, const LogsRequest& r, bool events, std::ostream& out,
           std::ostream& err)
      : o_(o), r_(r), events_(events), filter_(r.filter), out_(out), err_(err) {}

  int run();

 private:
  int read_attempt(int max_reads);
  int next_attempts(int count);
  int print_new_events();
  void finish_attempt() { out_ << filter_.finish() << std::flush; }

  const ClientOptions& o_;
  const LogsRequest& r_;
  const bool events_;
  LogFilter filter_;
  std::ostream& out_;
  std::ostream& err_;
  std::optional<int> current_;  // the attempt being read
  std::uint64_t offset_ = 0;
  json last_event_;  // the last event printed; null before the first
};

// Reads the current attempt's log from offset_ until an empty answer (or max_reads).
int Follower::read_attempt(int max_reads) {
  for (int i = 0; i < max_reads; ++i) {
    std::string target = job_path(r_.id) + "/logs?offset=" + std::to_string(offset_);
    if (current_) target += "&attempt=" + std::to_string(*current_);
    HttpResponse response;
    if (int rc = call(o_, "GET", target, response, err_); rc != kExitOk) return rc;
    if (response.body.empty()) break;
    out_ << filter_.feed(response.body) << std::flush;
    offset_ += response.body.size();
  }
  return kExitOk;
}

// Moves on to each attempt after the current one up to `count`, each announced on err with its
// cluster and read as far as it goes, the previous one's partial last line printed first.
int Follower::next_attempts(int count) {
  if (r_.attempt || count <= current_.value_or(0)) return kExitOk;
  json attempts;
  if (int rc = call_json(o_, "GET", job_path(r_.id) + "/attempts", attempts, err_); rc != kExitOk) {
    return rc;
  }
  // `logs --follow` starts at the latest attempt; `submit --follow` (events_) at the first.
  int next = current_ ? *current_ + 1 : events_ ? 1 : count;
  for (; next <= count; ++next) {
    if (current_) finish_attempt();
    current_ = next;
    offset_ = 0;
    std::string cluster = "?";
    for (const json& a : items(attempts, "attempts")) {
      if (member(a, "no") == next) cluster = field(a, "cluster");
    }
    err_ << "--- attempt " << next << " on " << cluster << " ---" << std::endl;
    if (int rc = read_attempt(next < count ? kReadsAtMost : kReadsPerRound); rc != kExitOk) {
      return rc;
    }
  }
  return kExitOk;
}

// The events after the last one printed, one line each on err ("[time] kind: message"). The
// answer holds the newest 1000, oldest first, without ids: the last one printed is found from
// the end (all are new when it is gone).
int Follower::print_new_events() {
  json body;
  if (int rc = call_json(o_, "GET", job_path(r_.id) + "/events", body, err_); rc != kExitOk) {
    return rc;
  }
  const json& list = items(body, "events");
  std::size_t from = 0;
  for (std::size_t i = list.size(); !last_event_.is_null() && i > 0; --i) {
    if (list[i - 1] == last_event_) {
      from = i;
      break;
    }
  }
  for (std::size_t i = from; i < list.size(); ++i) {
    const json& e = list[i];
    err_ << "[" << timestamp(member(e, "at_ms")) << "] " << text(e, "kind") << ": "
         << text(e, "message") << std::endl;
    last_event_ = e;
  }
  return kExitOk;
}

int Follower::run() {
  if (!r_.follow) {
    current_ = r_.attempt;
    int rc = read_attempt(kReadsAtMost);
    finish_attempt();
    return rc;
  }
  current_ = r_.attempt;
  for (;;) {
    // The state before the log, so that the reads after "terminal" see every byte.
    json job;
    if (int rc = call_json(o_, "GET", job_path(r_.id), job, err_); rc != kExitOk) return rc;
    const bool done = terminal(job);
    if (events_) {
      if (int rc = print_new_events(); rc != kExitOk) return rc;
    }
    // The current attempt's last bytes first, then the attempts that came after it.
    if (current_) {
      if (int rc = read_attempt(done ? kReadsAtMost : kReadsPerRound); rc != kExitOk) return rc;
    }
    if (int rc = next_attempts(attempt_count(job)); rc != kExitOk) return rc;
    if (done) {
      if (current_) {
        if (int rc = read_attempt(kReadsAtMost); rc != kExitOk) return rc;
      }
      finish_attempt();
      return kExitOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(o_.poll_ms));
  }
}

// The filter's flags against the job (a rank it has, a gang at all): kExitOk, a usage error, or
// the call's error.
int check_filter(const ClientOptions& o, const LogsRequest& r, std::ostream& err) {
  if (!r.filter.rank && r.filter.node.empty()) return kExitOk;
  json job;
  if (int rc = call_json(o, "GET", job_path(r.id), job, err); rc != kExitOk) return rc;
  if (std::string why = check_log_filter(r.filter, r.id, task_count(job)); !why.empty()) {
    err << "error: " << why << '\n';
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace

int run_job_logs(const ClientOptions& o, const LogsRequest& request, std::ostream& out,
                 std::ostream& err) {
  if (int rc = check_filter(o, request, err); rc != kExitOk) return rc;
  return Follower(o, request, false, out, err).run();
}

int run_job_logs(const ClientOptions& o, std::int64_t id, std::optional<int> attempt, bool follow,
                 std::ostream& out, std::ostream& err) {
  LogsRequest request;
  request.id = id;
  request.attempt = attempt;
  request.follow = follow;
  return run_job_logs(o, request, out, err);
}

int run_job_submit_follow(const ClientOptions& o, const std::string& file, std::ostream& out,
                          std::ostream& err, std::uint64_t workdir_limit,
                          const LogFilterOptions& filter, const SubmitExtras& extras) {
  json body;
  if (int rc = submit_spec(o, file, workdir_limit, extras, body, err); rc != kExitOk) return rc;
  if (const json jobs = member(body, "jobs"); jobs.is_array()) {
    for (const auto& j : jobs) out << field(j, "id") << '\n';
    err << "error: --follow follows one job, and " << file << " is a sweep of " << jobs.size()
        << " (submitted); follow one with: orchestrate job logs ID --follow\n";
    return kExitUsage;
  }
  LogsRequest request;
  request.id = member(body, "id").is_number_integer() ? member(body, "id").get<std::int64_t>() : 0;
  request.follow = true;
  request.filter = filter;
  err << "submitted job " << request.id << "; following its events and log until it ends (Ctrl-C "
      << "stops following, not the job)" << std::endl;
  if (int rc = Follower(o, request, true, out, err).run(); rc != kExitOk) return rc;
  json job;
  if (int rc = call_json(o, "GET", job_path(request.id), job, err); rc != kExitOk) return rc;
  const std::string state = job_state(job);
  const std::string reason = text(job, "reason");
  err << "job " << request.id << " " << state << (reason.empty() ? "" : ": " + reason) << std::endl;
  return state == "succeeded" ? kExitOk : kExitServerError;
}

}  // namespace orch
