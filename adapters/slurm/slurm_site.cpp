#include "adapters/slurm/slurm_site.h"

#include <algorithm>

#include "adapters/slurm/batch_script.h"
#include "adapters/ssh/shell_quote.h"
#include "scheduler/model/output_chunk.h"

namespace orch {
namespace {

constexpr std::size_t kMaxLineRead = 1 << 20;     // one observe reads at most 1 MiB of output
constexpr std::size_t kMaxOutputRead = 16 << 20;  // one read_output returns at most 16 MiB

std::string first_line(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s.size() > 300 ? s.substr(0, 300) + "..." : s;
}

// Slurm job ids are numbers; among several jobs with one token the highest is the newest.
bool newer(const slurm::JobRecord& a, const slurm::JobRecord& b) {
  if (a.job_id.size() != b.job_id.size()) return a.job_id.size() > b.job_id.size();
  return a.job_id > b.job_id;
}

std::optional<slurm::JobRecord> newest(std::vector<slurm::JobRecord> jobs) {
  if (jobs.empty()) return std::nullopt;
  return *std::min_element(jobs.begin(), jobs.end(), newer);
}

bool is_terminal(const slurm::JobRecord& job) {
  return slurm::map_job_state(job).phase == RunPhase::exited;
}

}  // namespace

SlurmSite::SlurmSite(ClusterSpec spec, std::unique_ptr<SshSession> ssh, SlurmSiteOptions options)
    : spec_(std::move(spec)), ssh_(std::move(ssh)), options_(std::move(options)) {
  if (options_.agent_path.empty()) options_.agent_path = slurm::default_agent_path();
}

Result<ExecResult> SlurmSite::run(const std::vector<std::string>& argv, bool allow_failure) {
  auto command = shell_command(argv);
  if (!command) return command.error();
  auto r = ssh_->exec(*command);
  if (!r) return r.error();
  // A login node whose Slurm controller does not answer cannot say how its jobs are: the site
  // is silent (its jobs may well be running), not the jobs failed.
  if (r->exit_status != 0 && slurm::is_controller_unreachable(r->err)) {
    return make_error(ErrorKind::unreachable,
                      "site " + spec_.name + ": " + argv.front() +
                          ": the Slurm controller does not answer: " + first_line(r->err));
  }
  if (r->exit_status != 0 && !allow_failure) {
    std::string why = first_line(r->err.empty() ? r->out : r->err);
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + argv.front() + " failed (exit " +
                                         std::to_string(r->exit_status) + ")" +
                                         (why.empty() ? "" : ": " + why));
  }
  return r;
}

Result<SiteInventory> SlurmSite::inventory() {
  auto r = run(slurm::node_list_argv());
  if (!r) return r.error();
  auto nodes = slurm::parse_node_list(r->out);
  if (!nodes) {
    return make_error(ErrorKind::io,
                      "site " + spec_.name + ": unexpected node list: " + nodes.error().message);
  }
  SiteInventory inv;
  for (const auto& n : *nodes) {
    std::string reason = n.healthy ? "" : n.state;
    if (!n.healthy && !n.reason.empty()) reason += ": " + n.reason;
    inv.nodes.push_back(NodeInfo{n.name, n.gpus, n.healthy, reason});
  }
  return inv;
}

Result<LaunchResult> SlurmSite::launch(const LaunchRequest& request) {
  auto plan = slurm::make_batch_plan(request, spec_);
  if (!plan) return plan.error();
  // Idempotent per token: a token Slurm already has is that launch, never a second job.
  auto existing = find(request.token);
  if (!existing) return existing.error();
  if (*existing) return **existing;
  auto prepared = ssh_->exec(plan->prepare_command);
  if (!prepared) return prepared.error();
  if (prepared->exit_status != 0) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": cannot create the run directory " +
                                         plan->paths.dir + ": " + first_line(prepared->err));
  }
  if (auto up = ssh_->upload(plan->paths.script, plan->script, 0755); !up) return up.error();
  auto submitted = ssh_->exec(plan->submit_command);
  if (!submitted) return submitted.error();
  if (submitted->exit_status != 0) {
    // Slurm refused the request (no such partition, more GPUs than a node has, ...): a failed
    // launch that placement should learn from, not a silent site.
    return make_error(ErrorKind::invalid,
                      "site " + spec_.name + ": sbatch refused the job: " +
                          first_line(submitted->err.empty() ? submitted->out : submitted->err));
  }
  auto id = slurm::parse_sbatch_job_id(submitted->out);
  if (!id) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + id.error().message);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ids_[request.token] = *id;
  }
  // The command line exactly as sent, --exclude and all, for the job's events.
  return LaunchResult{*id, {}, plan->submit_command};
}

Result<std::optional<slurm::JobRecord>> SlurmSite::from_squeue(const std::string& token) {
  auto r = run(slurm::squeue_by_name_argv(token));
  if (!r) return r.error();
  auto jobs = slurm::parse_squeue(r->out);
  if (!jobs) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + jobs.error().message);
  }
  return newest(std::move(*jobs));
}

Result<std::optional<slurm::JobRecord>> SlurmSite::from_scontrol(const std::string& job_id) {
  // "Invalid job id specified" (exit 1) means the controller has forgotten the job.
  auto r = run(slurm::scontrol_show_job_argv(job_id), true);
  if (!r) return r.error();
  if (r->exit_status != 0) return std::optional<slurm::JobRecord>{};
  auto jobs = slurm::parse_scontrol_jobs(r->out);
  if (!jobs) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + jobs.error().message);
  }
  return newest(std::move(*jobs));
}

Result<std::optional<slurm::JobRecord>> SlurmSite::from_sacct(const std::string& token) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (accounting_ == false) return std::optional<slurm::JobRecord>{};
  }
  auto r = run(slurm::sacct_by_name_argv(token), true);
  if (!r) return r.error();
  if (slurm::is_accounting_disabled(r->err) || slurm::is_accounting_disabled(r->out)) {
    std::lock_guard<std::mutex> lock(mu_);
    accounting_ = false;
    return std::optional<slurm::JobRecord>{};
  }
  if (r->exit_status != 0) return std::optional<slurm::JobRecord>{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    accounting_ = true;
  }
  auto jobs = slurm::parse_sacct(r->out);
  if (!jobs) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + jobs.error().message);
  }
  return newest(std::move(*jobs));
}

Result<std::optional<std::string>> SlurmSite::recorded_job_id(const std::string& token) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = job_ids_.find(token); it != job_ids_.end()) {
      return std::optional<std::string>{it->second};
    }
  }
  auto text = ssh_->read_file(slurm::run_paths(spec_.storage_root, token).job_id, 0, 64);
  if (!text) {
    if (text.error().kind == ErrorKind::not_found) return std::optional<std::string>{};
    return text.error();
  }
  std::string id = first_line(*text);
  if (id.empty()) return std::optional<std::string>{};
  std::lock_guard<std::mutex> lock(mu_);
  job_ids_[token] = id;
  return std::optional<std::string>{id};
}

Result<std::optional<slurm::JobRecord>> SlurmSite::lookup(const std::string& token) {
  auto live = from_squeue(token);
  if (!live) return live.error();
  if (*live) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ids_[token] = (*live)->job_id;
    }
    // squeue knows the state but not the exit code; scontrol has both while it remembers.
    if (!is_terminal(**live)) return live;
    auto detailed = from_scontrol((*live)->job_id);
    if (!detailed) return detailed.error();
    return *detailed ? detailed : live;
  }
  // The controller has forgotten the job (MinJobAge): accounting may still know it.
  auto id = recorded_job_id(token);
  if (!id) return id.error();
  if (*id) {
    auto detailed = from_scontrol(**id);
    if (!detailed) return detailed.error();
    if (*detailed) return detailed;
  }
  return from_sacct(token);
}

Result<std::optional<LaunchResult>> SlurmSite::find(const std::string& token) {
  auto job = lookup(token);
  if (!job) return job.error();
  if (*job) return std::optional<LaunchResult>{LaunchResult{(*job)->job_id, (*job)->nodes}};
  // Slurm has forgotten it, but the job wrote its id when it started: it was launched.
  auto id = recorded_job_id(token);
  if (!id) return id.error();
  if (*id) return std::optional<LaunchResult>{LaunchResult{**id, {}}};
  return std::optional<LaunchResult>{};
}

Result<RunObservation> SlurmSite::observe(const std::string& token, std::uint64_t output_offset) {
  auto job = lookup(token);
  if (!job) return job.error();
  RunObservation obs;
  obs.next_offset = output_offset;
  bool final = false;
  if (*job) {
    slurm::JobPhase phase = slurm::map_job_state(**job);
    obs.phase = phase.phase;
    obs.exit = phase.exit;
    obs.site_job_id = (*job)->job_id;
    obs.nodes = (*job)->nodes;
    final = phase.phase == RunPhase::exited;
  }
  if (obs.phase == RunPhase::queued) return obs;
  auto chunk = ssh_->read_file(slurm::run_paths(spec_.storage_root, token).output, output_offset,
                               kMaxLineRead);
  if (!chunk) {
    if (chunk.error().kind == ErrorKind::not_found) return obs;
    if (chunk.error().kind == ErrorKind::unreachable) return chunk.error();
    return obs;  // an unreadable log does not hide the job's state
  }
  OutputLines lines = split_output_chunk(*chunk, output_offset, kMaxLineRead, final);
  obs.new_lines = std::move(lines.lines);
  obs.next_offset = lines.next_offset;
  return obs;
}

Result<void> SlurmSite::cancel(const std::string& token) {
  // By name: it also reaches a job whose id we never learned (a crash right after sbatch).
  // scancel succeeds when nothing matches, so cancelling twice is harmless.
  auto r = run({"scancel", "--name=" + token});
  if (!r) return r.error();
  return Ok{};
}

Result<std::string> SlurmSite::read_output(const std::string& token, std::uint64_t offset,
                                           std::size_t max_bytes) {
  auto chunk = ssh_->read_file(slurm::run_paths(spec_.storage_root, token).output, offset,
                               std::min(max_bytes, kMaxOutputRead));
  if (!chunk && chunk.error().kind == ErrorKind::not_found) return std::string{};
  return chunk;
}

}  // namespace orch
