// The client commands of clusters and jobs (client_commands.h); each talks to the REST API
// through client_call.h and renders with job_render.h.
#include "cli/client_commands.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/job_render.h"
#include "cli/output_table.h"
#include "cli/user_config.h"
#include "scheduler/model/job_state.h"
#include "web/http/http_types.h"

namespace orch {
namespace {

using nlohmann::json;

std::string job_path(std::int64_t id) {
  return "/api/v1/jobs/" + std::to_string(id);
}

}  // namespace

std::string default_server_url() {
  const char* env = std::getenv("ORCH_URL");
  if (env != nullptr && *env != '\0') return env;
  if (auto recorded = read_server_record(user_config_path())) return recorded->server_url;
  return "http://127.0.0.1:8080";
}

std::string recorded_ca_file(const std::string& server) {
  auto recorded = read_server_record(user_config_path());
  return recorded && recorded->server_url == server ? recorded->ca_file : std::string();
}

std::string default_ca_file() {
  const char* env = std::getenv("ORCH_CA");
  return env != nullptr ? std::string(env) : std::string();
}

int run_cluster_list(const ClientOptions& o, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "GET", "/api/v1/clusters", body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_clusters(body, out);
  return kExitOk;
}

int run_cluster_nodes(const ClientOptions& o, const std::string& name, int event_limit,
                      std::ostream& out, std::ostream& err) {
  std::string target = cluster_path(name) + "/nodes";
  if (event_limit > 0) target += "?limit=" + std::to_string(event_limit);
  json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_cluster_nodes(body, out);
  return kExitOk;
}

int run_cluster_outage(const ClientOptions& o, const std::string& name, bool down,
                       std::ostream& out, std::ostream& err) {
  json body;
  const std::string target = cluster_path(name) + "/outage";
  if (int rc = call_json(o, "POST", target, body, err, json{{"down", down}}.dump());
      rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << "cluster " << name
        << (down ? " is in a simulated outage: its jobs are killed and it stops answering; they "
                   "resume elsewhere after its unreachable grace\n"
                 : " is back: it answers again and may take jobs\n");
  }
  return kExitOk;
}

int run_job_submit(const ClientOptions& o, const std::string& file, std::ostream& out,
                   std::ostream& err, std::uint64_t workdir_limit, const SubmitExtras& extras) {
  json body;
  if (int rc = submit_spec(o, file, workdir_limit, extras, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
  } else {
    // Only the id on out, so scripts can capture it; a sweep's, one per line in point order.
    // What to do next goes on err, before it (so the id stays the last line either way).
    const json jobs = member(body, "jobs");
    if (jobs.is_array()) {
      err << "submitted " << jobs.size() << " jobs; see them with: orchestrate job list --group "
          << text(body, "group") << '\n';
      for (const auto& j : jobs) out << field(j, "id") << '\n';
    } else {
      const std::string id = field(body, "id");
      err << "submitted job " << id << "; follow it with: orchestrate job logs " << id
          << " --follow\n";
      out << id << '\n';
    }
  }
  return kExitOk;
}

int run_job_list(const ClientOptions& o, const JobListQuery& q, std::ostream& out,
                 std::ostream& err) {
  const std::string target =
      with_query("/api/v1/jobs", {{"state", q.state},
                                  {"cluster", q.cluster},
                                  {"owner", q.owner},
                                  {"team", q.team},
                                  {"group", q.group},
                                  {"limit", q.limit > 0 ? std::to_string(q.limit) : std::string()},
                                  {"cursor", q.cursor}});
  json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  render_jobs(body, out, o.output == "wide");
  if (const json next = member(body, "next"); next.is_string()) {
    err << "more jobs: orchestrate job list --cursor " << next.get<std::string>() << '\n';
  }
  return kExitOk;
}

int run_job_show(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err) {
  json job, attempts, events;
  if (int rc = call_json(o, "GET", job_path(id), job, err); rc != kExitOk) return rc;
  if (int rc = call_json(o, "GET", job_path(id) + "/attempts", attempts, err); rc != kExitOk) {
    return rc;
  }
  if (int rc = call_json(o, "GET", job_path(id) + "/events", events, err); rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(json{{"job", job},
                    {"attempts", member(attempts, "attempts")},
                    {"events", member(events, "events")}},
               out);
  } else {
    render_job(job, attempts, events, out);
  }
  return kExitOk;
}

int run_plan(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err) {
  json job;
  if (int rc = call_json(o, "GET", job_path(id), job, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(json{{"job_id", id}, {"checkpoint_advice", member(job, "checkpoint_advice")}}, out);
  } else {
    render_plan(job, out);
  }
  return kExitOk;
}

int run_job_explain(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "GET", job_path(id) + "/explain", body, err); rc != kExitOk) {
    return rc;
  }
  as_json(o) ? print_json(body, out) : render_explain(body, out);
  return kExitOk;
}

namespace {

int cancel_job(const ClientOptions& o, std::int64_t id, json& body, std::ostream& err) {
  return call_json(o, "POST", job_path(id) + "/cancel", body, err);
}

}  // namespace

int run_job_cancel(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = cancel_job(o, id, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << "cancel requested for job " << id << " (state: " << field(body, "state") << ")\n";
  }
  return kExitOk;
}

namespace {

// The ids of the group's jobs that have not ended, oldest first; `total` counts every job of it.
int unfinished_in_group(const ClientOptions& o, const std::string& group,
                        std::vector<std::int64_t>& ids, std::size_t& total, std::ostream& err) {
  std::string cursor;
  do {
    json page;
    const std::string target =
        with_query("/api/v1/jobs", {{"group", group}, {"limit", "1000"}, {"cursor", cursor}});
    if (int rc = call_json(o, "GET", target, page, err); rc != kExitOk) return rc;
    for (const json& j : items(page, "jobs")) {
      ++total;
      const auto state = parse_job_state(text(j, "state"));
      const json id = member(j, "id");
      if (id.is_number_integer() && !(state && is_terminal(*state))) ids.push_back(id);
    }
    const json next = member(page, "next");
    cursor = next.is_string() ? next.get<std::string>() : std::string();
  } while (!cursor.empty());
  std::sort(ids.begin(), ids.end());
  return kExitOk;
}

}  // namespace

int run_job_cancel_many(const ClientOptions& o, const std::vector<std::int64_t>& ids,
                        const std::string& group, std::ostream& out, std::ostream& err) {
  std::vector<std::int64_t> targets = ids;
  if (!group.empty()) {
    std::size_t total = 0;
    if (int rc = unfinished_in_group(o, group, targets, total, err); rc != kExitOk) return rc;
    if (total == 0) {
      err << "error: no job is in group " << group << " (see the groups with: orchestrate job "
          << "list -o wide)\n";
      return kExitServerError;
    }
    if (targets.size() == ids.size()) {
      err << "every job of group " << group << " (" << total << ") has ended already\n";
      return kExitOk;
    }
  }
  int worst = kExitOk;
  // -o json with several jobs (or a group): one array of the server's answers, the refused
  // jobs left out (their errors are on stderr), so the output is one JSON document.
  if (as_json(o) && (targets.size() != 1 || !group.empty())) {
    json answers = json::array();
    for (std::int64_t id : targets) {
      json body;
      if (int rc = cancel_job(o, id, body, err); rc != kExitOk) {
        worst = rc;
      } else {
        answers.push_back(std::move(body));
      }
    }
    print_json(answers, out);
    return worst;
  }
  for (std::int64_t id : targets) {
    if (int rc = run_job_cancel(o, id, out, err); rc != kExitOk) worst = rc;
  }
  return worst;
}

}  // namespace orch
