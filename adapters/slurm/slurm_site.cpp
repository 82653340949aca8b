#include "adapters/slurm/slurm_site.h"

#include <algorithm>
#include <utility>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/observe_command.h"
#include "adapters/slurm/probe_command.h"
#include "adapters/ssh/shell_quote.h"
#include "scheduler/common/text.h"
#include "scheduler/model/output_chunk.h"
#include "scheduler/spec/job_spec.h"

namespace orch {
namespace {

constexpr std::size_t kMaxLineRead = 1 << 20;     // one observe reads at most 1 MiB of output
constexpr std::size_t kMaxOutputRead = 16 << 20;  // one read_output returns at most 16 MiB
// Tokens per squeue/sacct of a poll round: up to 128 characters each, so one `--name=` list stays
// far below the 128 KiB Linux allows one argument (and the whole command line well inside any
// SSH server's limits). A site watching more attempts asks once per this many.
constexpr std::size_t kNamesPerQuery = 256;

// Among several jobs with one token the highest id is the newest.
std::optional<slurm::JobRecord> newest(std::vector<slurm::JobRecord> jobs) {
  if (jobs.empty()) return std::nullopt;
  return *std::min_element(jobs.begin(), jobs.end(), slurm::is_newer_job);
}

std::vector<std::vector<std::string>> in_chunks(const std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> chunks;
  for (std::size_t i = 0; i < names.size(); i += kNamesPerQuery) {
    std::size_t end = std::min(names.size(), i + kNamesPerQuery);
    chunks.emplace_back(names.begin() + static_cast<std::ptrdiff_t>(i),
                        names.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return chunks;
}

bool is_unreachable(const Error& e) {
  return e.kind == ErrorKind::unreachable;
}

bool is_terminal(const slurm::JobRecord& job) {
  return slurm::map_job_state(job).phase == RunPhase::exited;
}

}  // namespace

SlurmSite::SlurmSite(ClusterSpec spec, std::unique_ptr<SshSession> ssh, SlurmSiteOptions options)
    : spec_(std::move(spec)), ssh_(std::move(ssh)), options_(std::move(options)) {
  if (options_.agent_path.empty()) options_.agent_path = slurm::default_agent_path();
}

std::uint64_t SlurmSite::RemoteCalls::commands_total() const {
  std::uint64_t total = 0;
  for (const auto& [program, n] : commands) total += n;
  return total;
}

SlurmSite::RemoteCalls SlurmSite::remote_calls() {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

void SlurmSite::count_command(const std::string& program) {
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_.commands[program];
}

Result<std::string> SlurmSite::read_remote(const std::string& path, std::uint64_t offset,
                                           std::size_t max_bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_.file_reads;
  }
  return ssh_->read_file(path, offset, max_bytes);
}

Result<ExecResult> SlurmSite::run(const std::vector<std::string>& argv, bool allow_failure) {
  auto command = shell_command(argv);
  if (!command) return command.error();
  return run_line(argv.front(), *command, allow_failure);
}

Result<ExecResult> SlurmSite::run_line(const std::string& program, const std::string& command,
                                       bool allow_failure) {
  count_command(program);
  auto r = ssh_->exec(command);
  if (!r) return r.error();
  // A login node whose Slurm controller does not answer cannot say how its jobs are: the site
  // is silent (its jobs may well be running), not the jobs failed.
  if (r->exit_status != 0 && slurm::is_controller_unreachable(r->err)) {
    return make_error(ErrorKind::unreachable,
                      "site " + spec_.name + ": " + program +
                          ": the Slurm controller does not answer: " + first_line(r->err));
  }
  if (r->exit_status != 0 && !allow_failure) {
    std::string why = first_line(r->err.empty() ? r->out : r->err);
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + program + " failed (exit " +
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
    inv.nodes.push_back(
        NodeInfo{n.name, n.gpus, n.healthy, reason, n.gpus_busy, n.cpus, n.memory_mb});
  }
  return inv;
}

Result<LaunchResult> SlurmSite::launch(const LaunchRequest& request) {
  auto agent = local_agent();
  if (!agent) return agent.error();
  const std::string remote_agent = slurm::remote_agent_path(spec_.storage_root, (*agent)->id);
  auto plan = slurm::make_batch_plan(request, spec_, remote_agent);
  if (!plan) return plan.error();
  // Idempotent per token: a token Slurm already has is that launch, adopted, never a second
  // job. This lookup is the only one per launch: the site worker does not call find() first.
  auto existing = find(request.token);
  if (!existing) return existing.error();
  if (*existing) {
    LaunchResult adopted = std::move(**existing);
    adopted.adopted = true;
    return adopted;
  }
  if (auto ready = prepare_launch(*plan, remote_agent, **agent); !ready) return ready.error();
  count_command("sbatch");
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

Result<void> SlurmSite::prepare_launch(const slurm::BatchPlan& plan,
                                       const std::string& remote_agent,
                                       const slurm::AgentBinary& agent) {
  count_command("mkdir");
  auto prepared = ssh_->exec(plan.prepare_command);
  if (!prepared) return prepared.error();
  if (prepared->exit_status != 0) {
    // Under the storage root this server was given: its configuration, not the job's fault.
    return make_error(ErrorKind::misconfigured,
                      "site " + spec_.name + ": cannot create the run directory " + plan.paths.dir +
                          ": " + first_line(prepared->err));
  }
  // The agent's name holds its content's hash: the right size is the right file. The upload
  // is atomic, so a task never runs a half-written agent.
  auto size = slurm::parse_agent_size(prepared->out);
  if (!size || static_cast<std::size_t>(*size) != agent.content.size()) {
    if (auto up = ssh_->upload(remote_agent, agent.content, 0755); !up) return up.error();
  }
  if (!plan.secrets.empty()) {
    if (auto up = ssh_->upload(plan.paths.secrets, plan.secrets, 0600); !up) return up.error();
  }
  return ssh_->upload(plan.paths.script, plan.script, 0755);
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
  auto text = read_remote(slurm::run_paths(spec_.storage_root, token).job_id, 0, 64);
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
  // A launch token goes through the poll round's command, which also reads its tasks.
  if (slurm::check_token(token)) {
    TaskReadings readings;
    auto looked = lookup_many({token}, &readings);
    if (looked) {
      auto job = looked->at(token);
      if (!job) return job.error();
      auto it = readings.find(token);
      return observed(token, output_offset, *job, it == readings.end() ? nullptr : &it->second);
    }
    if (is_unreachable(looked.error())) return looked.error();
  }
  auto job = lookup(token);
  if (!job) return job.error();
  return observed(token, output_offset, *job, nullptr);
}

Result<std::map<std::string, slurm::JobRecord>> SlurmSite::from_sacct_many(
    const std::vector<std::string>& tokens) {
  std::map<std::string, slurm::JobRecord> found;
  for (const auto& chunk : in_chunks(tokens)) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (accounting_ == false) return found;
    }
    auto r = run(slurm::sacct_by_names_argv(chunk), true);
    if (!r) return r.error();
    if (slurm::is_accounting_disabled(r->err) || slurm::is_accounting_disabled(r->out)) {
      std::lock_guard<std::mutex> lock(mu_);
      accounting_ = false;
      return found;
    }
    if (r->exit_status != 0) continue;  // as from_sacct: sacct knows nothing of them
    {
      std::lock_guard<std::mutex> lock(mu_);
      accounting_ = true;
    }
    auto jobs = slurm::parse_sacct(r->out);
    if (!jobs) {
      return make_error(ErrorKind::io, "site " + spec_.name + ": " + jobs.error().message);
    }
    found.merge(slurm::newest_by_name(std::move(*jobs), chunk));
  }
  return found;
}

Result<SlurmSite::Lookups> SlurmSite::lookup_many(const std::vector<std::string>& tokens,
                                                  TaskReadings* readings) {
  // Every token's newest job in squeue, and its tasks' records: one command per kNamesPerQuery
  // tokens.
  std::map<std::string, slurm::JobRecord> listed;
  for (const auto& chunk : in_chunks(tokens)) {
    auto command = slurm::observe_command(chunk, spec_.storage_root);
    if (!command) return command.error();
    auto r = run_line("squeue", *command);
    if (!r) return r.error();
    slurm::ObserveOutput out = slurm::split_observe_output(r->out);
    auto jobs = slurm::parse_squeue(out.squeue);
    if (!jobs) {
      return make_error(ErrorKind::io, "site " + spec_.name + ": " + jobs.error().message);
    }
    listed.merge(slurm::newest_by_name(std::move(*jobs), chunk));
    for (auto& [token, snapshot] : out.tasks) {
      if (readings) (*readings)[token] = TaskReading{std::move(snapshot), out.now_ms};
    }
  }
  // Then what lookup() does after its squeue, token by token, except that the tokens left for
  // sacct are asked together at the end.
  Lookups found;
  std::vector<std::string> forgotten;  // neither squeue nor scontrol knows them
  std::optional<Error> silent;         // the site stopped answering: ask nothing more
  for (const auto& token : tokens) {
    if (found.count(token)) continue;
    if (silent) {
      found.emplace(token, *silent);
      continue;
    }
    Result<std::optional<slurm::JobRecord>> job = std::optional<slurm::JobRecord>{};
    if (auto it = listed.find(token); it != listed.end()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        job_ids_[token] = it->second.job_id;
      }
      // squeue knows the state but not the exit code; scontrol has both while it remembers.
      job = std::optional<slurm::JobRecord>{it->second};
      if (is_terminal(it->second)) {
        auto detailed = from_scontrol(it->second.job_id);
        if (!detailed || *detailed) job = std::move(detailed);
      }
    } else if (auto id = recorded_job_id(token); !id) {
      job = id.error();
    } else {
      // The controller has forgotten the job (MinJobAge): scontrol by the id it recorded, then
      // accounting.
      if (*id) job = from_scontrol(**id);
      if (job && !*job) {
        forgotten.push_back(token);
        continue;
      }
    }
    if (!job && is_unreachable(job.error())) silent = job.error();
    found.emplace(token, std::move(job));
  }
  if (forgotten.empty()) return found;
  if (silent) {
    for (const auto& token : forgotten) found.emplace(token, *silent);
    return found;
  }
  auto history = from_sacct_many(forgotten);
  for (const auto& token : forgotten) {
    if (history) {
      auto it = history->find(token);
      found.emplace(token, it == history->end() ? std::optional<slurm::JobRecord>{}
                                                : std::optional<slurm::JobRecord>{it->second});
    } else if (is_unreachable(history.error())) {
      found.emplace(token, history.error());
    } else {
      found.emplace(token, from_sacct(token));  // an unreadable answer: each alone, as before
    }
  }
  return found;
}

std::vector<Result<RunObservation>> SlurmSite::observe_many(
    const std::vector<ObserveRequest>& requests) {
  std::vector<std::string> tokens;  // the launch tokens, which can go into a list of names
  for (const auto& r : requests) {
    if (slurm::check_token(r.token)) tokens.push_back(r.token);
  }
  Lookups jobs;
  TaskReadings readings;
  if (!tokens.empty()) {
    auto looked = lookup_many(tokens, &readings);
    if (!looked) {
      if (is_unreachable(looked.error())) return {looked.error()};
      return ClusterPort::observe_many(requests);  // squeue's answer unreadable: one by one
    }
    jobs = std::move(*looked);
  }
  std::vector<Result<RunObservation>> answers;
  answers.reserve(requests.size());
  for (const auto& r : requests) {
    auto it = jobs.find(r.token);
    Result<std::optional<slurm::JobRecord>> job = it != jobs.end() ? it->second : lookup(r.token);
    auto read = readings.find(r.token);
    const TaskReading* tasks = read == readings.end() ? nullptr : &read->second;
    answers.push_back(job ? observed(r.token, r.output_offset, *job, tasks)
                          : Result<RunObservation>(job.error()));
    if (!answers.back() && is_unreachable(answers.back().error())) break;
  }
  return answers;
}

Result<RunObservation> SlurmSite::observed(const std::string& token, std::uint64_t output_offset,
                                           const std::optional<slurm::JobRecord>& job,
                                           const TaskReading* tasks) {
  RunObservation obs;
  obs.next_offset = output_offset;
  if (job) {
    slurm::JobPhase phase = slurm::map_job_state(*job);
    obs.phase = phase.phase;
    obs.exit = phase.exit;
    obs.waiting = phase.waiting;
    obs.site_job_id = job->job_id;
    obs.nodes = job->nodes;
  }
  if (tasks) {
    if (auto judged = judge_tasks(token, job, *tasks, obs); !judged) return judged.error();
  }
  const bool final = obs.phase == RunPhase::exited;
  if (obs.phase == RunPhase::queued) return obs;
  auto chunk =
      read_remote(slurm::run_paths(spec_.storage_root, token).output, output_offset, kMaxLineRead);
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

Result<void> SlurmSite::signal(const std::string& token, const std::string& signal) {
  if (!is_save_signal(signal)) {
    return make_error(ErrorKind::invalid,
                      "cannot send signal \"" + signal + "\": expected USR1, USR2, INT or HUP");
  }
  // To the job's steps (the agents, which pass it on to each task's command), never to the
  // batch shell, which would die of it. Nothing matching the name is not an error.
  auto r = run({"scancel", "--signal=" + signal, "--name=" + token});
  if (!r) return r.error();
  return Ok{};
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
  auto chunk = read_remote(slurm::run_paths(spec_.storage_root, token).output, offset,
                           std::min(max_bytes, kMaxOutputRead));
  if (!chunk && chunk.error().kind == ErrorKind::not_found) return std::string{};
  return chunk;
}

Result<std::unique_ptr<ClusterPort>> make_slurm_site(const ClusterSpec& cluster,
                                                     const SiteContext& context) {
  return std::unique_ptr<ClusterPort>(
      std::make_unique<SlurmSite>(cluster, std::make_unique<SshSession>(cluster.name, cluster.ssh),
                                  SlurmSiteOptions{context.agent_path}));
}

}  // namespace orch
