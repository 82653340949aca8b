// The client commands of clusters and jobs (client_commands.h); each talks to the REST API
// through client_call.h and renders with job_render.h.
#include "cli/client_commands.h"

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
#include "cli/workdir_upload.h"
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
  return env != nullptr && *env != '\0' ? std::string(env) : "http://127.0.0.1:8080";
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
                   std::ostream& err, std::uint64_t workdir_limit) {
  json body;
  std::string workdir;
  if (int rc = prepare_workdir(o, file, workdir_limit, workdir, err); rc != kExitOk) return rc;
  if (int rc = post_file(o, "/api/v1/jobs", file, body, err, workdir); rc != kExitOk) return rc;
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
  render_jobs(body, out);
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

int run_job_cancel(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err) {
  json body;
  if (int rc = call_json(o, "POST", job_path(id) + "/cancel", body, err); rc != kExitOk) {
    return rc;
  }
  if (as_json(o)) {
    print_json(body, out);
  } else {
    out << "cancel requested for job " << id << " (state: " << field(body, "state") << ")\n";
  }
  return kExitOk;
}

}  // namespace orch
