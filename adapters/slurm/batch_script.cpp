#include "adapters/slurm/batch_script.h"

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adapters/slurm/container_words.h"
#include "adapters/slurm/task_events.h"
#include "adapters/slurm/workdir_steps.h"
#include "adapters/ssh/shell_quote.h"
#include "scheduler/common/text.h"
#include "scheduler/model/checkpoint_dir.h"
#include "scheduler/model/job_shape.h"
#include "scheduler/model/launch_contract.h"
#include "scheduler/model/launch_token.h"
#include "scheduler/model/topology_hint.h"
#include "scheduler/spec/slurm_job_rules.h"

namespace orch::slurm {
namespace {

constexpr std::size_t kMaxTokenLength = 128;
constexpr std::size_t kMaxCommentName = 200;  // bytes of the job's name kept in --comment

bool is_token_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

bool has_control(std::string_view s) {
  for (char c : s) {
    if (is_control(c)) return true;
  }
  return false;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

Error invalid(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

// The run directories live on the cluster and are named in sbatch options, so the root must be
// an absolute path (sbatch --chdir changes the directory relative paths would be read from),
// without control characters (they would split `scontrol show job -o` lines) and without '\'
// (sbatch drops backslashes from --output and stops expanding '%' patterns).
Result<void> check_storage_root(const std::string& root, const std::string& cluster) {
  std::string where = "storage root '" + root + "' of Slurm cluster '" + cluster + "'";
  if (root.empty() || root[0] != '/') {
    return invalid(where +
                   " is not an absolute path: give the full path of a directory on the "
                   "cluster's shared filesystem, such as /shared/orchestrate");
  }
  if (has_control(root)) return invalid(where + " contains a control character");
  if (root.find('\\') != std::string::npos) {
    return invalid(where + " contains a backslash, which sbatch removes from --output paths");
  }
  return Ok{};
}

// sbatch expands %j, %N, ... in --output and --error; '%%' is a literal '%'.
std::string escape_percent(const std::string& path) {
  std::string out;
  for (char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

// The job's name as it appears in --comment: control characters (newlines would split the
// one-line outputs of squeue and scontrol) become '?' and '=' becomes ':' (so no part of it
// reads as a "Key=" of `scontrol show job -o`, which also prints the whole sbatch line since
// Slurm 25.11), and it is cut at a UTF-8 boundary.
std::string comment_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (is_control(c)) {
      out += '?';
    } else {
      out += c == '=' ? ':' : c;
    }
  }
  if (out.size() > kMaxCommentName) {
    std::size_t cut = kMaxCommentName;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

// One line of the script: words already quoted, joined by spaces.
struct ScriptWriter {
  std::string text;
  std::optional<Error> error;

  // Quotes `value` (reporting which value it was if it cannot be quoted).
  std::string q(std::string_view value, std::string_view what) {
    auto quoted = shell_quote(value);
    if (quoted) return *quoted;
    if (!error) error = invalid(std::string(what) + ": " + quoted.error().message);
    return "''";
  }
  void line(const std::string& l) { text += l + "\n"; }
};

// The header, the job_id record, the working directory and the exports.
void write_prologue(ScriptWriter& w, const LaunchRequest& r, const ClusterSpec& cluster,
                    const RunPaths& p) {
  w.line("#!/bin/sh");
  w.line("# orchestrate attempt " + r.token + " (job " + std::to_string(r.job_id) + ", attempt " +
         std::to_string(r.attempt_no) + "), written by orchestrate: do not edit.");
  w.line("# Its Slurm job id goes to job_id first, so a restarted server can find it.");
  // The first command ends sbatch's scan for #SBATCH lines: nothing below can add options.
  w.line("printf '%s\\n' \"${SLURM_JOB_ID:-}\" >" + w.q(p.job_id + ".tmp", "job_id path") +
         " && mv -f " + w.q(p.job_id + ".tmp", "job_id path") + " " + w.q(p.job_id, "job_id path"));
  w.line("cd " + w.q(p.work, "work directory") + " || { printf 'orchestrate: cannot enter %s\\n' " +
         w.q(p.work, "work directory") + " >&2; exit 1; }");
  for (const auto& [name, value] : r.env) {
    w.line("export " + name + "=" + w.q(value, "environment variable " + name));
  }
  // The secrets live in a file of their own (0600), never in this script (which sbatch copies
  // into Slurm's spool), and that file goes as soon as it is read. Slurm never requeues
  // (--no-requeue), so nothing reads it twice.
  if (!r.secret_env.empty()) {
    w.line(". " + w.q(p.secrets, "secrets path") + " && rm -f " + w.q(p.secrets, "secrets path") +
           " || { printf 'orchestrate: cannot read the job secrets in %s\\n' " +
           w.q(p.secrets, "secrets path") + " >&2; exit 1; }");
  }
  std::vector<std::pair<std::string, std::string>> orch_env = launch_token_env(r);
  const std::pair<std::string, std::string> attempt_env[] = {
      {"ORCH_JOB_ID", std::to_string(r.job_id)},
      {"ORCH_ATTEMPT", std::to_string(r.attempt_no)},
      {"ORCH_RUN_DIR", p.work},
      {"ORCH_GPUS", std::to_string(r.nodes * r.gpus_per_node)},
      {"ORCH_SITE", cluster.name},
  };
  orch_env.insert(orch_env.end(), std::begin(attempt_env), std::end(attempt_env));
  for (const auto& [name, value] : orch_env) {
    w.line("export " + name + "=" + w.q(value, "environment variable " + name));
  }
  // The job's own checkpoint directory, exported above with request.env: 0700, never a link.
  if (!r.checkpoint_dir.empty()) w.line(std::string(kMakeCheckpointDirCommand));
}

// $master: the first node of the allocation (node rank 0 under srun), by the address Slurm
// reaches it at (NodeAddr); its name when scontrol does not say.
void write_master(ScriptWriter& w) {
  w.line("# The rendezvous host: the allocation's first node, by its NodeAddr.");
  w.line(R"(first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 1))");
  w.line(R"(first=${first:-${SLURMD_NODENAME:-$(hostname)}})");
  w.line(R"(master=$(scontrol -o show node "$first" 2>/dev/null |)"
         R"( sed -n 's/.* NodeAddr=\([^ ]*\).*/\1/p' | head -n 1))");
  w.line(R"(master=${master:-$first})");
}

// The job's command under its shell (`shell:`; job_shape.h), each word quoted: " 'w1' 'w2'...".
std::string shell_words(ScriptWriter& w, const LaunchRequest& r) {
  std::string out;
  for (const auto& word : job_shell_argv(r.shell, r.command)) {
    out += " " + w.q(word, "the job's command");
  }
  return out;
}

// The srun line: every task under the agent, in the background (see the header).
// In the job's container, when it has one (issue 40; container_words.h): pyxis's options go to
// srun, apptainer's words before the job's shell.
std::string srun_line(ScriptWriter& w, const LaunchRequest& r, const RunPaths& p,
                      const std::string& agent, const ContainerWords& image,
                      const LiveWatchSpec& watch) {
  // The live watch (issue 43): the same flags for every task; the agent fills in {node}.
  std::string watch_flags;
  for (const auto& word : live_watch_flags(watch)) watch_flags += " " + w.q(word, "live_watch");
  // I/O stalls (issue 43): the bound from the job's median save.
  if (r.io_stall_after_s > 0) {
    watch_flags += " --io-stall-after-s " + w.q(seconds_text(r.io_stall_after_s), "io_stall_after_s");
  }
  // In the job's code when it has some (issue 40; workdir_steps.h).
  auto chdir = srun_chdir_option(r);
  if (!chdir && !w.error) w.error = chdir.error();
  return "srun" + (chdir ? *chdir : std::string()) + image.srun_options +
         " --nodes=" + std::to_string(r.nodes) +
         " --ntasks-per-node=" + std::to_string(r.tasks_per_node) + " --kill-on-bad-exit=1 " +
         w.q(agent, "agent path") + " run --events " +
         w.q(escape_percent(p.tasks) + "/%t.events.jsonl", "events path") + " --heartbeat-s " +
         w.q(seconds_text(r.heartbeat_s), "heartbeat_s") + " --hang-after-s " +
         w.q(seconds_text(r.hang_after_s), "hang_after_s") + watch_flags +
         " --place-from slurm --master-addr \"$master\" --master-port " +
         std::to_string(master_port_for(r.token)) + " --" + image.exec_prefix + shell_words(w, r) +
         " &";
}

Result<std::string> make_script(const LaunchRequest& r, const ClusterSpec& cluster,
                                const RunPaths& p, const std::string& agent) {
  ScriptWriter w;
  write_prologue(w, r, cluster, p);
  write_master(w);
  // srun runs as a child of this shell, which passes the pre-termination signal on: Slurm sends
  // it (--signal=B:...) to the batch shell alone. srun forwards it to every task, and each
  // task's agent to its command's whole process group. scancel's TERM reaches every process.
  // The trap is set before srun starts: a signal that comes before `child` is known is kept
  // and passed on as soon as it is (a shell runs traps between commands, so none is lost).
  const bool forwards = cluster.slurm.pre_term_s > 0;
  const std::string sig = forwards ? w.q(cluster.slurm.pre_term_signal, "pre_term_signal") : "";
  // A trapped signal interrupts `wait` (status 128 + the signal): the script waits again, and
  // gets srun's own status even when srun ended meanwhile (the shell keeps it until waited
  // for; a second wait for a status already collected answers 127, and the first one stands).
  w.line("child=; pending=; trapped=; status=");
  if (forwards) {
    w.line("trap " +
           w.q("trapped=1; if [ -n \"$child\" ]; then kill -s " + sig +
                   " \"$child\" 2>/dev/null; else pending=1; fi",
               "trap action") +
           " " + sig);
  }
  auto image = container_words(r, cluster, agent, p.work);
  if (!image) return image.error();
  auto code = workdir_script_lines(r, p.dir, *image);
  if (!code) return code.error();
  w.text += *code;
  w.line("# Every task under the agent; one task's failure ends them all.");
  w.line(srun_line(w, r, p, agent, *image, cluster.live_watch));
  w.line("child=$!");
  if (forwards) w.line("[ -z \"$pending\" ] || kill -s " + sig + " \"$child\" 2>/dev/null");
  w.line("while :; do");
  w.line("  trapped=");
  w.line("  wait \"$child\"; s=$?");
  w.line("  [ \"$s\" -eq 127 ] && [ -n \"$status\" ] && break");
  w.line("  status=$s");
  w.line("  [ -n \"$trapped\" ] && [ \"$s\" -gt 128 ] || break");
  w.line("done");
  w.line("exit \"$status\"");
  if (w.error) return *w.error;
  return w.text;
}

std::vector<std::string> sbatch_argv(const LaunchRequest& r, const ClusterSpec& cluster,
                                     const RunPaths& p) {
  const SlurmSpec& s = cluster.slurm;
  std::vector<std::string> argv = {
      "sbatch",
      "--parsable",
      "--job-name=" + r.token,
      "--comment=orchestrate token=" + r.token + " name=" + comment_name(r.job_name),
      "--output=" + escape_percent(p.output),
      "--error=" + escape_percent(p.output),
      "--open-mode=append",
      "--chdir=" + p.work,
      "--nodes=" + std::to_string(r.nodes),
      "--ntasks-per-node=" + std::to_string(r.tasks_per_node),
  };
  if (r.gpus_per_node > 0) {
    argv.push_back("--gres=" + (s.gres.empty() ? std::string("gpu") : s.gres) + ":" +
                   std::to_string(r.gpus_per_node));
  }
  // The job's shape (issue 40): its CPUs and memory, and its own options over the cluster's
  // (those the cluster pins or forbids stay the cluster's; placement kept conflicts away).
  if (r.cpus_per_task > 0) argv.push_back("--cpus-per-task=" + std::to_string(r.cpus_per_task));
  if (r.memory_mb > 0) argv.push_back("--mem=" + std::to_string(r.memory_mb) + "M");
  const SlurmJobOptions o = effective_slurm_options(s, r.slurm);
  if (!o.partition.empty()) argv.push_back("--partition=" + o.partition);
  if (!o.account.empty()) argv.push_back("--account=" + o.account);
  if (!o.qos.empty()) argv.push_back("--qos=" + o.qos);
  if (!o.reservation.empty()) argv.push_back("--reservation=" + o.reservation);
  if (!o.constraint.empty()) argv.push_back("--constraint=" + o.constraint);
  if (o.exclusive.value_or(false)) argv.emplace_back("--exclusive");
  // The job's own time_limit, in whole minutes (Slurm's unit, rounded up), wins over the
  // cluster's: Slurm then knows when it ends, for its own backfill of other tenants' jobs.
  if (r.time_limit_s) {
    argv.push_back("--time=" +
                   std::to_string(static_cast<long long>(std::ceil(*r.time_limit_s / 60.0))));
  } else if (!s.time_limit.empty()) {
    argv.push_back("--time=" + s.time_limit);
  }
  // The job's topology hint: at most this many leaf switches, waited for up to its time.
  if (std::string sw = slurm_switches_option(r.topology); !sw.empty()) argv.push_back(sw);
  if (!r.exclude_nodes.empty()) argv.push_back("--exclude=" + join(r.exclude_nodes, ","));
  // A resume from a copy on one node's own disk, a gang's survivors and the hot spares it takes:
  // the allocation includes those nodes (and others as needed).
  if (auto pinned = pinned_nodes(r); !pinned.empty()) {
    argv.push_back("--nodelist=" + join(pinned, ","));
  }
  if (s.pre_term_s > 0) {
    argv.push_back("--signal=B:" + s.pre_term_signal + "@" + std::to_string(s.pre_term_s));
  }
  argv.emplace_back("--no-requeue");
  argv.push_back(p.script);
  return argv;
}

}  // namespace

Result<void> check_token(const std::string& token) {
  bool ok = !token.empty() && token.size() <= kMaxTokenLength && token[0] != '.';
  for (char c : token) ok = ok && is_token_char(c);
  if (ok) return Ok{};
  return make_error(ErrorKind::invalid,
                    "launch token '" + token +
                        "' cannot name a Slurm job and a run directory: use 1-128 characters "
                        "from [A-Za-z0-9._-], not starting with '.'");
}

Result<void> check_node_names(const std::vector<std::string>& nodes, std::string_view option) {
  for (const auto& n : nodes) {
    bool bad = n.empty() || n.find_first_of(", []") != std::string::npos || has_control(n);
    if (bad) {
      return invalid("node name '" + n + "' cannot go into " + std::string(option) +
                     ": it must be one node name without commas, brackets or blanks");
    }
  }
  return Ok{};
}

std::string runs_dir(const std::string& storage_root) {
  std::string root = storage_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root == "/") root.clear();
  return root + "/runs";
}

RunPaths run_paths(const std::string& storage_root, const std::string& token) {
  RunPaths p;
  p.dir = runs_dir(storage_root) + "/" + token;
  p.script = p.dir + "/job.sh";
  p.output = p.dir + "/output.log";
  p.job_id = p.dir + "/job_id";
  p.work = p.dir + "/work";
  p.gang = p.dir + "/gang";
  p.tasks = p.dir + "/tasks";
  p.node_lost = p.dir + "/node_lost";
  p.setup_failed = p.dir + "/setup_failed";
  p.secrets = p.dir + "/secrets.env";
  return p;
}

namespace {

// The job's own sbatch options were checked where its spec was read; a launch read back from
// the outbox is held to the same rule (no value can become another option).
Result<void> check_slurm_options(const SlurmJobOptions& o) {
  for (std::string_view name : kSlurmJobOptionNames) {
    if (name == "exclusive") continue;
    const std::string v = slurm_option_value(o, name);
    if (v.empty()) continue;
    if (std::string why = slurm_option_problem(name, v); !why.empty()) {
      return invalid("slurm." + std::string(name) + " cannot be passed to sbatch: " + why);
    }
  }
  return Ok{};
}

bool bad_seconds(double s) {
  return !std::isfinite(s) || s < 0;
}

Result<void> check_request(const LaunchRequest& request, const std::string& agent) {
  if (request.nodes < 1) {
    return invalid("a Slurm job needs at least one node, the request asks for " +
                   std::to_string(request.nodes));
  }
  if (request.tasks_per_node < 1) {
    return invalid("a Slurm job needs at least one task per node, the request asks for " +
                   std::to_string(request.tasks_per_node));
  }
  if (request.gpus_per_node < 0) {
    return invalid("gpus_per_node is negative (" + std::to_string(request.gpus_per_node) + ")");
  }
  if (bad_seconds(request.heartbeat_s) || bad_seconds(request.heartbeat_timeout_s) ||
      bad_seconds(request.hang_after_s) || bad_seconds(request.io_stall_after_s)) {
    return invalid(
        "heartbeat_s, heartbeat_timeout_s, hang_after_s and io_stall_after_s must be seconds >= 0");
  }
  for (const auto& [name, value] : request.secret_env) {
    if (!is_env_name(name))
      return invalid("secret_env name '" + name + "' is not usable in a shell");
  }
  for (const auto& [name, value] : request.env) {
    if (!is_env_name(name)) {
      return invalid("environment variable name '" + name +
                     "' is not usable in a shell: use letters, digits and '_', not starting "
                     "with a digit");
    }
  }
  if (agent.empty() || agent[0] != '/') {
    return invalid("the agent's path on the cluster '" + agent + "' is not absolute");
  }
  if (auto ok = check_node_names(request.exclude_nodes, "sbatch --exclude"); !ok) return ok;
  if (!is_job_shell(request.shell)) return invalid("unknown shell '" + request.shell + "'");
  if (request.cpus_per_task < 0 || request.memory_mb < 0) {
    return invalid("cpus_per_task and memory must not be negative");
  }
  if (auto ok = check_slurm_options(request.slurm); !ok) return ok;
  const auto pinned = pinned_nodes(request);
  if (pinned.empty()) return Ok{};
  if (static_cast<int>(pinned.size()) > request.nodes) {
    return invalid("launch " + request.token + " names " + std::to_string(pinned.size()) +
                   " nodes it must get, more than its " + std::to_string(request.nodes));
  }
  return check_node_names(pinned, "sbatch --nodelist");
}

// mkdir -p of the run directory, work/, tasks/ and the agent's directory; the gang file; the
// agent's size when it is there and executable.
Result<std::string> prepare_command(const LaunchRequest& request, const RunPaths& p,
                                    const std::string& agent) {
  const std::string bin = agent.substr(0, agent.rfind('/'));
  auto mkdir =
      shell_command({"mkdir", "-p", "--", p.dir, p.work, p.tasks, bin.empty() ? "/" : bin});
  auto gang = shell_command({"printf", "%s\\n", gang_file_line(request)});
  auto gang_path = shell_quote(p.gang);
  auto test = shell_command({"test", "-x", agent});
  auto stat = shell_command({"stat", "-c", "%s", "--", agent});
  if (!mkdir || !gang || !gang_path || !test || !stat) {
    return invalid("run directory: " + (!mkdir       ? mkdir.error()
                                        : !gang      ? gang.error()
                                        : !gang_path ? gang_path.error()
                                        : !test      ? test.error()
                                                     : stat.error())
                                           .message);
  }
  return *mkdir + " && " + *gang + " >" + *gang_path + " && { " + *test + " && " + *stat +
         " || :; }";
}

}  // namespace

Result<BatchPlan> make_batch_plan(const LaunchRequest& request, const ClusterSpec& cluster,
                                  const std::string& agent) {
  if (auto ok = check_token(request.token); !ok) return ok.error();
  if (auto ok = check_storage_root(cluster.storage_root, cluster.name); !ok) return ok.error();
  if (auto ok = check_request(request, agent); !ok) return ok.error();

  BatchPlan plan;
  plan.paths = run_paths(cluster.storage_root, request.token);
  auto script = make_script(request, cluster, plan.paths, agent);
  if (!script) return script.error();
  plan.script = std::move(*script);
  if (!request.secret_env.empty()) {
    ScriptWriter secrets;
    for (const auto& [name, value] : request.secret_env) {
      // The message names the variable, never the value.
      secrets.line("export " + name + "=" + secrets.q(value, "secret_env " + name));
    }
    if (secrets.error) return *secrets.error;
    plan.secrets = std::move(secrets.text);
  }

  auto prepare = prepare_command(request, plan.paths, agent);
  if (!prepare) return prepare.error();
  plan.prepare_command = std::move(*prepare);

  auto submit = shell_command(sbatch_argv(request, cluster, plan.paths));
  if (!submit) return invalid("sbatch options: " + submit.error().message);
  plan.submit_command = std::move(*submit);
  return plan;
}

}  // namespace orch::slurm
