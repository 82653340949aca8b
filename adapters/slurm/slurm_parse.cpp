// The job queries: squeue, scontrol show job, sacct, and sbatch's answer. Node list in
// node_list.cpp, host lists in hostlist.cpp, state mapping in job_state_map.cpp.

#include "adapters/slurm/slurm_parse.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "adapters/slurm/parse_util.h"

namespace orch::slurm {
namespace {

using detail::contains;
using detail::malformed;
using detail::trim;

// Slurm's words for "nothing here" in the fields we read.
bool is_none(std::string_view s) {
  return s.empty() || s == "None" || s == "(null)" || s == "None assigned" || s == "N/A";
}

Result<std::vector<std::string>> nodes_of(std::string_view field, std::string_view line) {
  field = trim(field);
  if (is_none(field)) return std::vector<std::string>{};
  auto nodes = expand_hostlist(field);
  if (!nodes) return malformed(nodes.error().message + ", in the line", line);
  return nodes;
}

Result<void> check_id_and_state(const JobRecord& job, std::string_view line,
                                std::string_view command) {
  if (!detail::is_job_id(job.job_id)) {
    return malformed(std::string(command) + " line does not start with a job id", line);
  }
  if (!detail::is_state_word(job.state)) {
    return malformed(std::string(command) + " line has no job state", line);
  }
  return Ok{};
}

// ---- squeue -----------------------------------------------------------------------------

// %i job id, %j name, %T long state, %r reason, %N nodes, %k comment. The comment is free text
// and goes last; the fields before it cannot contain '|' (ids, a launch token, upper-case
// state words, Slurm's reason words, a host list).
constexpr std::string_view kSqueueFormat = "%i|%j|%T|%r|%N|%k";
constexpr std::size_t kSqueueFields = 6;

Result<JobRecord> parse_squeue_line(std::string_view line) {
  auto f = detail::split_first(line, '|', kSqueueFields);
  if (f.size() != kSqueueFields) {
    return malformed("squeue line has " + std::to_string(f.size()) + " fields, expected " +
                         std::to_string(kSqueueFields) + " (" + std::string(kSqueueFormat) + ")",
                     line);
  }
  JobRecord job;
  job.job_id = std::string(trim(f[0]));
  job.name = std::string(f[1]);
  job.state = std::string(trim(f[2]));
  if (auto ok = check_id_and_state(job, line, "squeue"); !ok) return ok.error();
  std::string_view reason = trim(f[3]);
  job.reason = is_none(reason) ? "" : std::string(reason);
  auto nodes = nodes_of(f[4], line);
  if (!nodes) return nodes.error();
  job.nodes = std::move(*nodes);
  std::string_view comment = f[5];
  job.comment = comment == "(null)" ? "" : std::string(comment);
  return job;
}

// ---- scontrol show job -o ---------------------------------------------------------------

// Every key `scontrol show job` prints (Slurm 22.05 to 26.05). Most values have no blanks, but
// those of kFreeText may hold anything (paths, the submit line, comments): inside them only a
// key from this list that has not been printed yet ends the value (keys come in a fixed order).
// The fields read here (JobId, JobName, JobState, Reason, ExitCode, NodeList) all come before
// the first free-text value and the first occurrence of a key wins, so no free text can
// impersonate them; the comment, free text itself, ends at the next such key.
// clang-format off
constexpr std::string_view kJobKeys[] = {
    "JobId", "ArrayJobId", "ArrayTaskId", "ArrayTaskThrottle", "HetJobId", "HetJobOffset",
    "JobName", "SLUID", "HetJobIdSet", "UserId", "GroupId", "MCS_label", "Priority", "Nice",
    "Account", "QOS", "WCKey", "JobState", "Reason", "FailedNode", "Dependency", "Requeue",
    "Restarts", "BatchFlag", "Reboot", "ExitCode", "DerivedExitCode", "RunTime", "TimeLimit",
    "TimeMin", "SubmitTime", "EligibleTime", "AccrueTime", "ResizeTime", "StartTime", "EndTime",
    "Deadline", "CronJob", "CrontabSpec", "PreemptEligibleTime", "PreemptTime", "SuspendTime",
    "SecsPreSuspend", "LastSchedEval", "Scheduler", "Partition", "AllocNode:Sid", "BatchFeatures",
    "ReqNodeList", "ExcNodeList", "NodeList", "SchedNodeList", "BatchHost", "StepMgrEnabled",
    "FedOrigin", "FedViableSiblings", "FedActiveSiblings", "NumNodes", "NumCPUs", "NumTasks",
    "CPUs/Task", "ReqB:S:C:T", "TRES", "ReqTRES", "AllocTRES", "Socks/Node", "NtasksPerN:B:S:C",
    "CoreSpec", "ThreadSpec", "JOB_GRES", "Nodes", "CPU_IDs", "Mem", "GRES", "MinCPUsNode",
    "MinMemoryCPU", "MinMemoryNode", "MinTmpDiskNode", "MemUpdate", "Features", "DelayBoot",
    "ClusterFeatures", "Prefer", "Reservation", "OverSubscribe", "Exclusive", "Contiguous",
    "Licenses", "LicensesAlloc", "Network", "Command", "SubmitLine", "WorkDir", "AdminComment",
    "SystemComment", "Comment", "Extra", "StdErr", "StdIn", "StdOut", "SegmentSize",
    "SpreadSegments", "ConsolidateSegments", "Switches", "BurstBuffer", "BurstBufferState",
    "CpuFreqMin", "CpuFreqMax", "CpuFreqGov", "Power", "GresAllowTaskSharing", "GresEnforceBind",
    "GresOneTaskPerSharing", "KillOInInvalidDependent", "KillOnInvalidDependent", "SpreadJob",
    "ExpeditedRequeue", "OOMKillStep", "CpusPerTres", "MemPerTres", "TresBind", "TresFreq",
    "TresPerJob", "TresPerNode", "TresPerSocket", "TresPerTask", "MailUser", "MailType",
    "NtasksPerTRES", "ContainerType", "Container", "ContainerID", "SELinuxContext", "ResvPorts"};
constexpr std::string_view kFreeText[] = {
    "Command", "SubmitLine", "WorkDir", "AdminComment", "SystemComment", "Comment", "Extra",
    "StdErr", "StdIn", "StdOut", "MailUser", "Features"};
// clang-format on

// "Key=" at the start of a word: the key ([A-Za-z][A-Za-z0-9_:/]*), else empty.
std::string_view key_of(std::string_view word) {
  std::size_t eq = word.find('=');
  if (eq == std::string_view::npos || eq == 0) return {};
  std::string_view key = word.substr(0, eq);
  if (!((key[0] >= 'A' && key[0] <= 'Z') || (key[0] >= 'a' && key[0] <= 'z'))) return {};
  for (char c : key) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ':' || c == '/';
    if (!ok) return {};
  }
  return key;
}

// One `scontrol show job -o` line -> its keys and values (first occurrence of a key wins).
std::map<std::string, std::string, std::less<>> scontrol_fields(std::string_view line) {
  std::map<std::string, std::string, std::less<>> fields;
  std::string key;
  std::string value;
  bool have = false;
  auto flush = [&] {
    if (!have) return;
    while (!value.empty() && value.back() == ' ') value.pop_back();
    fields.emplace(key, value);  // emplace keeps the first
  };
  for (std::string_view word : detail::split_all(line, ' ')) {
    std::string_view k = key_of(word);
    bool free_text = have && contains(kFreeText, key);
    // Inside free text only a known key Slurm has not printed yet ends the value: keys come in
    // a fixed order, so "JobState=RUNNING" inside a comment stays part of the comment.
    bool starts_key =
        !k.empty() &&
        (!free_text || (contains(kJobKeys, k) && k != key && fields.find(k) == fields.end()));
    if (starts_key) {
      flush();
      key = std::string(k);
      value = std::string(word.substr(k.size() + 1));
      have = true;
    } else if (have) {
      value += ' ';
      value += word;
    }
  }
  flush();
  return fields;
}

Result<JobRecord> parse_scontrol_line(std::string_view line) {
  if (line.substr(0, 6) != "JobId=") {
    return malformed("scontrol show job line does not start with JobId=", line);
  }
  auto fields = scontrol_fields(line);
  auto get = [&](std::string_view k) -> std::string {
    auto it = fields.find(k);
    return it == fields.end() ? std::string{} : it->second;
  };
  for (std::string_view k : {"JobName", "JobState", "ExitCode"}) {
    if (fields.find(k) == fields.end()) {
      return malformed("scontrol show job line has no " + std::string(k) + "= (truncated?)", line);
    }
  }
  JobRecord job;
  job.job_id = get("JobId");
  job.name = get("JobName");
  job.state = get("JobState");
  if (auto ok = check_id_and_state(job, line, "scontrol show job"); !ok) return ok.error();
  std::string reason = get("Reason");
  job.reason = is_none(reason) ? "" : reason;
  auto ec = detail::parse_exit_code(get("ExitCode"));
  if (!ec) return malformed("scontrol show job line has an ExitCode that is not N:S", line);
  job.exit_code = ec->code;
  job.signal = ec->signal;
  auto nodes = nodes_of(get("NodeList"), line);
  if (!nodes) return nodes.error();
  job.nodes = std::move(*nodes);
  std::string comment = get("Comment");
  job.comment = comment == "(null)" ? "" : comment;
  return job;
}

// ---- sacct ------------------------------------------------------------------------------

// -P separates fields with '|' and nothing else is escaped, so the free-text Comment is last.
constexpr std::size_t kSacctFields = 7;

Result<JobRecord> parse_sacct_line(std::string_view line) {
  auto f = detail::split_first(line, '|', kSacctFields);
  if (f.size() != kSacctFields) {
    return malformed("sacct line has " + std::to_string(f.size()) + " fields, expected " +
                         std::to_string(kSacctFields),
                     line);
  }
  JobRecord job;
  job.job_id = std::string(trim(f[0]));
  job.name = std::string(f[1]);
  // "CANCELLED by 1000": the state, then who.
  std::string_view state = trim(f[2]);
  if (std::size_t by = state.find(" by "); by != std::string_view::npos) {
    job.cancelled_by = std::string(trim(state.substr(by + 4)));
    state = state.substr(0, by);
  }
  job.state = std::string(state);
  if (auto ok = check_id_and_state(job, line, "sacct"); !ok) return ok.error();
  std::string_view exit = trim(f[3]);
  if (!exit.empty()) {
    auto ec = detail::parse_exit_code(exit);
    if (!ec) return malformed("sacct line has an ExitCode that is not N:S", line);
    job.exit_code = ec->code;
    job.signal = ec->signal;
  }
  auto nodes = nodes_of(f[4], line);
  if (!nodes) return nodes.error();
  job.nodes = std::move(*nodes);
  std::string_view reason = trim(f[5]);
  job.reason = is_none(reason) ? "" : std::string(reason);
  job.comment = std::string(f[6]);
  return job;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& n : names) {
    if (!joined.empty()) joined += ',';
    joined += n;
  }
  return joined;
}

template <typename ParseLine>
Result<std::vector<JobRecord>> parse_lines(std::string_view output, ParseLine parse_line) {
  std::vector<JobRecord> jobs;
  for (std::string_view line : detail::non_blank_lines(output)) {
    auto job = parse_line(line);
    if (!job) return job.error();
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

}  // namespace

std::vector<std::string> squeue_by_name_argv(const std::string& job_name) {
  return {"squeue", "-h", "-t", "all", "--name=" + job_name, "-o", std::string(kSqueueFormat)};
}

std::vector<std::string> squeue_by_names_argv(const std::vector<std::string>& job_names) {
  return {"squeue",
          "-h",
          "-t",
          "all",
          "--name=" + join_names(job_names),
          "-o",
          std::string(kSqueueFormat)};
}

Result<std::vector<JobRecord>> parse_squeue(std::string_view output) {
  return parse_lines(output, parse_squeue_line);
}

std::vector<std::string> scontrol_show_job_argv(const std::string& job_id) {
  return {"scontrol", "-o", "show", "job", job_id};
}

Result<std::vector<JobRecord>> parse_scontrol_jobs(std::string_view output) {
  std::vector<JobRecord> jobs;
  for (std::string_view line : detail::non_blank_lines(output)) {
    // "slurm_load_jobs error: Invalid job id specified": the job is gone (MinJobAge).
    if (line.find("Invalid job id specified") != std::string_view::npos) continue;
    auto job = parse_scontrol_line(line);
    if (!job) return job.error();
    jobs.push_back(std::move(*job));
  }
  return jobs;
}

std::vector<std::string> sacct_by_name_argv(const std::string& job_name) {
  // sacct looks back only to midnight by default; a job started yesterday would be missed.
  return {"sacct",
          "-n",
          "-P",
          "-X",
          "--starttime=now-30days",
          "--name=" + job_name,
          "--format=JobID,JobName,State,ExitCode,NodeList,Reason,Comment"};
}

std::vector<std::string> sacct_by_names_argv(const std::vector<std::string>& job_names) {
  return sacct_by_name_argv(join_names(job_names));
}

Result<std::vector<JobRecord>> parse_sacct(std::string_view output) {
  return parse_lines(output, parse_sacct_line);
}

bool is_newer_job(const JobRecord& a, const JobRecord& b) {
  if (a.job_id.size() != b.job_id.size()) return a.job_id.size() > b.job_id.size();
  return a.job_id > b.job_id;
}

std::map<std::string, JobRecord> newest_by_name(std::vector<JobRecord> jobs,
                                                const std::vector<std::string>& names) {
  const std::set<std::string_view> wanted(names.begin(), names.end());
  std::map<std::string, JobRecord> newest;
  for (auto& job : jobs) {
    if (!wanted.count(job.name)) continue;
    auto it = newest.find(job.name);
    if (it == newest.end()) {
      newest.emplace(job.name, std::move(job));
    } else if (is_newer_job(job, it->second)) {
      it->second = std::move(job);
    }
  }
  return newest;
}

bool is_accounting_disabled(std::string_view sacct_stderr_or_stdout) {
  return sacct_stderr_or_stdout.find("accounting storage is disabled") != std::string_view::npos;
}

Result<std::string> parse_sbatch_job_id(std::string_view output) {
  auto lines = detail::non_blank_lines(output);
  if (lines.size() != 1) {
    return make_error(ErrorKind::invalid,
                      "sbatch --parsable printed " + std::to_string(lines.size()) +
                          " lines, expected one job id: '" + detail::quote_line(output) + "'");
  }
  std::string_view line = trim(lines[0]);
  std::string_view id = line.substr(0, line.find(';'));
  if (id.empty() ||
      !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return malformed("sbatch --parsable did not print a job id", line);
  }
  return std::string(id);
}

bool is_controller_unreachable(std::string_view stderr_text) {
  return stderr_text.find("Unable to contact slurm controller") != std::string_view::npos ||
         stderr_text.find("Socket timed out on send/recv") != std::string_view::npos;
}

}  // namespace orch::slurm
