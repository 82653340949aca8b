// CLI11 wiring for the client commands; the work itself is in client_commands.cpp and (node
// health, burn-in, reports) node_commands.cpp, burn_in_commands.cpp and report_commands.cpp, and
// (checkpoints and data) checkpoint_commands.cpp and data_commands.cpp.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/access_commands.h"
#include "cli/client_cli.h"
#include "cli/complete_command.h"
#include "cli/data_commands.h"
#include "cli/health_commands.h"
#include "cli/job_logs.h"
#include "cli/secret_commands.h"
#include "cli/series_command.h"
#include "cli/workdir_pack.h"
#include "scheduler/model/job_state.h"

namespace orch {
namespace {

// Arguments of every client command; one instance shared by their callbacks.
struct Args {
  ClientOptions options;
  std::string name;
  bool down = false;
  bool up = false;
  std::string file;
  std::string state;
  std::string cluster;
  std::int64_t id = 0;
  int attempt = 0;
  int limit = 0;
  bool follow = false;
  std::string node;
  std::string cursor;
  std::string reason;
  bool wait = false;
  int timeout_s = 600;
  int window_days = 0;
  std::string by = "cluster";      // report cost --by
  std::string since;               // report cost --since
  std::string text;                // a ticket's summary, update or resolution
  std::vector<std::string> nodes;  // the nodes a ticket concerns
  std::string incident;
  bool from_provider = false;
  std::string role;
  std::string owner;
  std::string team;
  std::string group;
  std::vector<std::string> teams;  // --teams a,b (or repeated)
  SecretSetArgs secret;
  std::string workdir_limit;  // job submit --workdir-limit
  int rank = -1;              // job logs --rank (-1: every rank)
  bool raw = false;           // job logs --raw
  bool series = false;        // job show --series
  bool json = false;          // job show --json (as -o json)
  SubmitExtras submit;        // job submit -e, --set, --queue-anyway
  // job cancel ID...
  std::vector<std::int64_t> ids;
};

// The job states, for `job list --state` (its help lists them, CLI11 checks them).
std::vector<std::string> job_state_names() {
  std::vector<std::string> out;
  for (JobState s : kAllJobStates) out.emplace_back(to_string(s));
  return out;
}

// --rank's value: a task rank, 0 or more ("" when fine, as CLI11 validators answer).
std::string check_rank(const std::string& value) {
  const bool digits = !value.empty() && value.size() <= 9 &&
                      value.find_first_not_of("0123456789") == std::string::npos;
  return digits ? std::string()
                : "a task's rank: 0 or more (a gang's ranks are 0 to nodes x tasks_per_node - 1), "
                  "got '" +
                      value + "'";
}

// A command's failure leaves parse() as CLI11's RuntimeError carrying the exit code.
void finish(int rc) {
  if (rc != kExitOk) throw CLI::RuntimeError(rc);
}

CLI::App* command(CLI::App& parent, const std::string& name, const std::string& help) {
  CLI::App* sub = parent.add_subcommand(name, help);
  sub->fallthrough();  // --server and -o also work after the subcommand
  return sub;
}

void add_id(CLI::App* cmd, Args& args) {
  cmd->add_option("ID", args.id, "job id")->required()->check(CLI::PositiveNumber);
}

// `cluster burn-in`, `cluster probes` and `cluster drain|activate|retire`.
void add_cluster_health_commands(CLI::App& cluster, const std::shared_ptr<Args>& args,
                                 std::ostream* o, std::ostream* e) {
  CLI::App* burn_in =
      command(cluster, "burn-in", "probe every node of a cluster now and quarantine the slow ones");
  burn_in->add_option("NAME", args->name, "cluster name")->required();
  burn_in->add_flag("--wait", args->wait, "wait until the cluster is active, then show the probes");
  burn_in->add_option("--timeout", args->timeout_s, "seconds to wait (default 600)")
      ->check(CLI::Range(1, 86400));
  burn_in->callback([=] {
    finish(run_cluster_burn_in(args->options, args->name, args->wait, args->timeout_s, *o, *e));
  });
  CLI::App* check = command(cluster, "check",
                            "run a cluster's preflight now: one line per check (SSH, key file, "
                            "partition, storage root, agent...), and what to fix; exit 1 when "
                            "one fails (the cluster takes no jobs until every check passes)");
  check->add_option("NAME", args->name, "cluster name")->required();
  check->callback([=] { finish(run_cluster_check(args->options, args->name, *o, *e)); });
  CLI::App* probes = command(cluster, "probes", "the latest probe round of a cluster");
  probes->add_option("NAME", args->name, "cluster name")->required();
  probes->add_option("--node", args->node, "one node's probes instead, newest first");
  probes->callback(
      [=] { finish(run_cluster_probes(args->options, args->name, args->node, *o, *e)); });
  const std::pair<const char*, const char*> admissions[] = {
      {"drain", "no new work; running jobs finish or move at their next checkpoint"},
      {"activate", "a drained cluster takes new work again"},
      {"retire", "the cluster is returned: its running jobs move now, and it takes no work"}};
  CLI::App* add = command(cluster, "add",
                          "clusters from a document in the clusters file's format join the running "
                          "server (and stay across restarts)");
  add->add_option("FILE", args->file, "clusters document (YAML)")->required();
  add->callback([=] { finish(run_cluster_add(args->options, args->file, *o, *e)); });
  command(cluster, "reload",
          "read the server's clusters file again: new clusters join, removed ones drain; "
          "invalid: nothing changes")
      ->callback([=] { finish(run_cluster_reload(args->options, *o, *e)); });
  for (const auto& [verb, help] : admissions) {
    CLI::App* cmd = command(cluster, verb, help);
    cmd->add_option("NAME", args->name, "cluster name")->required();
    cmd->add_option("--reason", args->reason, "why, for the cluster's record");
    const std::string v = verb;
    cmd->callback([=] {
      finish(run_cluster_set_admission(args->options, args->name, v, args->reason, *o, *e));
    });
  }
}

// `node list|quarantine|release` and `report providers`.
void add_health_commands(CLI::App& app, const std::shared_ptr<Args>& args, std::ostream* o,
                         std::ostream* e) {
  CLI::App* node = command(app, "node", "list nodes, quarantine and release them");
  node->require_subcommand(1);
  CLI::App* list = command(*node, "list", "every node with its state and health");
  list->add_option("--cluster", args->cluster, "only this cluster's nodes");
  list->add_option("--state", args->state, "only nodes in this state")
      ->check(CLI::IsMember({"active", "quarantined", "retired"}));
  list->callback([=] { finish(run_node_list(args->options, args->cluster, args->state, *o, *e)); });
  CLI::App* node_show = command(*node, "show", "one node's standing and the evidence of its rate");
  node_show->add_option("CLUSTER", args->cluster, "cluster name")->required();
  node_show->add_option("NODE", args->node, "node name")->required();
  node_show->callback(
      [=] { finish(run_node_show(args->options, args->cluster, args->node, *o, *e)); });
  for (bool quarantine : {true, false}) {
    CLI::App* cmd = command(*node, quarantine ? "quarantine" : "release",
                            quarantine ? "take a node out of service by hand"
                                       : "put a quarantined or retired node back in service");
    cmd->add_option("CLUSTER", args->cluster, "cluster name")->required();
    cmd->add_option("NODE", args->node, "node name")->required();
    cmd->add_option("--reason", args->reason, "why, for the node's record");
    cmd->callback([=] {
      finish(run_node_set_state(args->options, args->cluster, args->node, quarantine, args->reason,
                                *o, *e));
    });
  }

  CLI::App* report = command(app, "report", "reports over the clusters' history");
  report->require_subcommand(1);
  CLI::App* providers = command(*report, "providers", "a scorecard per cluster and per vendor");
  providers->add_option("--window-days", args->window_days, "days of history (default 30)")
      ->check(CLI::Range(1, 3650));
  providers->callback(
      [=] { finish(run_report_providers(args->options, args->window_days, *o, *e)); });
  CLI::App* cost = command(*report, "cost",
                           "what GPU-hours cost, useful and lost, by job, team, cluster or vendor");
  cost->add_option("--by", args->by, "job, team, cluster (default) or vendor")
      ->check(CLI::IsMember({"job", "team", "cluster", "vendor"}));
  cost->add_option("--since", args->since,
                   "a UTC date (2026-12-01) or month (2026-12); default: this month");
  cost->callback([=] { finish(run_report_cost(args->options, args->by, args->since, *o, *e)); });

  CLI::App* ticket =
      command(app, "ticket", "the support record: tickets with each cluster's provider");
  ticket->require_subcommand(1);
  CLI::App* open = command(*ticket, "open", "open a ticket with a cluster's provider");
  open->add_option("CLUSTER", args->cluster, "cluster name")->required();
  open->add_option("SUMMARY", args->text, "what is wrong, in a line")->required();
  open->add_option("--node", args->nodes, "a node it concerns (repeat for more)");
  open->add_option("--incident", args->incident, "the node-ledger incident it concerns");
  open->callback([=] {
    finish(run_ticket_open(args->options, args->cluster, args->text, args->nodes, args->incident,
                           *o, *e));
  });
  CLI::App* update = command(*ticket, "update", "add to a ticket's history");
  update->add_option("ID", args->id, "ticket id")->required()->check(CLI::PositiveNumber);
  update->add_option("TEXT", args->text, "what happened")->required();
  update->add_flag("--provider", args->from_provider,
                   "the provider's answer (its first one is the ticket's first response)");
  update->callback([=] {
    finish(run_ticket_update(args->options, args->id, args->text, args->from_provider, *o, *e));
  });
  CLI::App* close = command(*ticket, "close", "close a ticket: it is resolved");
  close->add_option("ID", args->id, "ticket id")->required()->check(CLI::PositiveNumber);
  close->add_option("--resolution", args->text, "how it was resolved");
  close->callback([=] { finish(run_ticket_close(args->options, args->id, args->text, *o, *e)); });
  CLI::App* tickets = command(*ticket, "list", "tickets, newest first");
  tickets->add_option("--cluster", args->cluster, "only this cluster's");
  tickets->add_option("--state", args->state, "only open or closed ones")
      ->check(CLI::IsMember({"open", "closed"}));
  tickets->callback(
      [=] { finish(run_ticket_list(args->options, args->cluster, args->state, *o, *e)); });
  CLI::App* show = command(*ticket, "show", "one ticket with its history");
  show->add_option("ID", args->id, "ticket id")->required()->check(CLI::PositiveNumber);
  show->callback([=] { finish(run_ticket_show(args->options, args->id, *o, *e)); });
}

// Arguments of `checkpoint ...` and `data ...`.
struct DataArgs {
  std::int64_t job = 0;
  std::string name;
  std::string cluster;
  std::string path;
  std::string to;
  bool all = false;
  bool watch = false;
  double interval_s = 1.0;
  int limit = 0;
  std::string cursor;
};

// $ORCH_WATCH_ROUNDS: how many tables `data transfers --watch` draws at most (tests, scripts);
// 0 (unset or not a positive number): until no transfer is active.
int watch_rounds_from_env() {
  const char* text = std::getenv("ORCH_WATCH_ROUNDS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && value > 0 && value < 1000000 ? static_cast<int>(value) : 0;
}

// `checkpoint ls` and `data ls|add|replicate|transfers|audit`.
void add_data_commands(CLI::App& app, const std::shared_ptr<Args>& args, std::ostream* o,
                       std::ostream* e) {
  auto d = std::make_shared<DataArgs>();
  CLI::App* checkpoint = command(app, "checkpoint", "a job's checkpoints and their copies");
  checkpoint->require_subcommand(1);
  CLI::App* ckpt_ls =
      command(*checkpoint, "ls", "a job's checkpoints newest first: size, files, copies, age");
  ckpt_ls->add_option("JOB", d->job, "job id")->required()->check(CLI::PositiveNumber);
  ckpt_ls->callback([=] { finish(run_checkpoint_ls(args->options, d->job, *o, *e)); });

  CLI::App* data =
      command(app, "data", "datasets, copies between clusters, transfers and the integrity audit");
  data->require_subcommand(1);
  command(*data, "ls", "every dataset with its size and copies")->callback([=] {
    finish(run_data_ls(args->options, *o, *e));
  });
  CLI::App* add = command(*data, "add", "register a dataset where its first copy lives");
  add->add_option("NAME", d->name, "dataset name: letters, digits, '-', '_', '.'")->required();
  add->add_option("--cluster", d->cluster, "the cluster that holds it")->required();
  add->add_option("--path", d->path, "its absolute path on that cluster")->required();
  add->callback([=] { finish(run_data_add(args->options, d->name, d->cluster, d->path, *o, *e)); });
  CLI::App* replicate = command(
      *data, "replicate", "copy a dataset, or a job's newest verified checkpoint, to a cluster");
  CLI::Option* name = replicate->add_option("NAME", d->name, "dataset name");
  CLI::Option* job =
      replicate->add_option("--job", d->job, "a job id: copy its newest verified checkpoint");
  job->check(CLI::PositiveNumber);
  name->excludes(job);
  replicate->add_option("--to", d->to, "destination cluster")->required();
  replicate->callback([=] {
    if (d->name.empty() && d->job <= 0) throw CLI::RequiredError("NAME or --job");
    finish(run_data_replicate(args->options, d->name, d->job, d->to, *o, *e));
  });
  CLI::App* transfers = command(*data, "transfers", "transfers with progress, rate, cap and ETA");
  transfers->add_flag("--all", d->all, "done and cancelled ones too (default: active and failed)");
  transfers->add_option("--limit", d->limit, "transfers per page (1 to 1000; default 100)")
      ->check(CLI::Range(1, 1000));
  transfers->add_option("--cursor", d->cursor, "the page after this one (printed with the list)");
  transfers->add_flag("--watch", d->watch, "redraw until no transfer is active (or Ctrl-C)");
  transfers->add_option("--interval", d->interval_s, "seconds between redraws (default 1)")
      ->check(CLI::Range(0.1, 3600.0));
  transfers->callback([=] {
    TransfersOptions t;
    t.all = d->all;
    t.limit = d->limit;
    t.cursor = d->cursor;
    t.watch = d->watch;
    t.interval_ms = static_cast<int>(d->interval_s * 1000);
    t.max_rounds = watch_rounds_from_env();
    t.terminal = o == &std::cout && isatty(STDOUT_FILENO) == 1;
    finish(run_data_transfers(args->options, t, *o, *e));
  });
  CLI::App* audit =
      command(*data, "audit", "check every copy now: still there, same sizes, a sampled hash");
  audit->add_option("--cluster", d->cluster, "only the copies at this cluster");
  audit->callback([=] { finish(run_data_audit(args->options, d->cluster, *o, *e)); });
  // Set last, so that only `data --help` shows it (subcommands inherit a footer when added).
  data->footer(
      "Datasets are named data registered where they live and copied to other clusters;\n"
      "checkpoints are copied by each job's replication policy. A copy is present, copying,\n"
      "verified, corrupt, missing or deleted, and only a verified copy is ever used. Transfers\n"
      "run rsync over SSH (resumable, checksummed, capped) and are throttled while they slow\n"
      "a running job. `orchestrate checkpoint ls JOB` shows a job's checkpoints and copies.");
}

// `secret set|grant|list|delete`: what a job may name in its secret_env (list: any token; the
// rest: admin).
void add_secret_commands(CLI::App& app, const std::shared_ptr<Args>& args, std::ostream* o,
                         std::ostream* e) {
  CLI::App* secret = command(app, "secret", "secrets jobs may name in secret_env, by team grant");
  secret->require_subcommand(1);
  CLI::App* set = command(*secret, "set", "create or replace a secret (its value read here)");
  set->add_option("NAME", args->secret.name, "the name jobs give it")->required();
  auto* from_file =
      set->add_option("--from-file", args->secret.from_file, "a regular file of at most 64 KiB");
  auto* from_env = set->add_option("--from-env", args->secret.from_env,
                                   "a variable of this shell's environment");
  from_file->excludes(from_env);
  set->add_option("--teams", args->teams, "teams whose jobs may use it (default: every team)");
  set->callback([=] {
    SecretSetArgs a = args->secret;
    a.teams = split_team_list(args->teams);
    finish(run_secret_set(args->options, a, *o, *e));
  });
  CLI::App* grant = command(*secret, "grant", "replace the teams a secret is granted to");
  grant->add_option("NAME", args->name, "the secret")->required();
  grant->add_option("--teams", args->teams, "the teams (none given: every team)")->required();
  grant->callback([=] {
    finish(run_secret_grant(args->options, args->name, split_team_list(args->teams), *o, *e));
  });
  command(*secret, "list", "every secret's name, grants and age (never a value)")->callback([=] {
    finish(run_secret_list(args->options, *o, *e));
  });
  CLI::App* del = command(*secret, "delete", "delete a secret");
  del->add_option("NAME", args->name, "the secret")->required();
  del->callback([=] { finish(run_secret_delete(args->options, args->name, *o, *e)); });
}

// `token create|list|revoke` and `audit` (admin only).
void add_access_commands(CLI::App& app, const std::shared_ptr<Args>& args, std::ostream* o,
                         std::ostream* e) {
  CLI::App* token = command(app, "token", "API tokens: who may use the server, with which role");
  token->require_subcommand(1);
  CLI::App* create = command(*token, "create", "make a token for a user; prints it once");
  create->add_option("NAME", args->name, "the user the token speaks for")->required();
  create->add_option("--role", args->role, "viewer, user, operator or admin")
      ->required()
      ->check(CLI::IsMember({"viewer", "user", "operator", "admin"}));
  create->add_option("--teams", args->teams,
                     "the teams a user may submit for, such as vision,nlp (the first is its "
                     "default; operators and admins act for any)");
  create->callback([=] {
    finish(run_token_create(args->options, args->name, args->role, split_team_list(args->teams), *o,
                            *e));
  });
  command(*token, "list", "every token with its role and state (never the token)")->callback([=] {
    finish(run_token_list(args->options, *o, *e));
  });
  CLI::App* revoke = command(*token, "revoke", "refuse a user's token from now on");
  revoke->add_option("NAME", args->name, "the token's user")->required();
  revoke->callback([=] { finish(run_token_revoke(args->options, args->name, *o, *e)); });

  add_secret_commands(app, args, o, e);

  CLI::App* audit = command(app, "audit", "who changed what, allowed or refused (newest first)");
  audit->add_option("--limit", args->limit, "entries to show (1 to 1000; default 100)")
      ->check(CLI::Range(1, 1000));
  audit->add_option("--before", args->cursor, "entries older than this id (printed with the list)");
  audit->callback([=] { finish(run_audit(args->options, args->limit, args->cursor, *o, *e)); });
}

}  // namespace

void add_client_commands(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<Args>();
  args->options.server = default_server_url();
  app.add_option("--server", args->options.server,
                 "orchestrate server URL (default: $ORCH_URL, else the URL `orchestrate serve` "
                 "recorded in ~/.config/orchestrate/config.json, else http://127.0.0.1:8080)");
  args->options.ca_file = default_ca_file();
  app.add_option("--ca", args->options.ca_file,
                 "for an https server: the PEM file of the CA that signed its certificate "
                 "(default: $ORCH_CA, else the system's trusted CAs)");
  app.add_option("--state", args->options.state_dir,
                 "a server's state directory on this machine: send its admin.token (default: "
                 "$ORCH_STATE; give it before the command)");
  app.add_option("-o,--output", args->options.output,
                 "output format: table, wide (job list: also priority, team, group, owner) or "
                 "json")
      ->check(CLI::IsMember({"table", "wide", "json"}));
  // A server found through the user's config is trusted with the CA recorded beside it, unless
  // --ca or $ORCH_CA names one.
  app.parse_complete_callback([args] {
    if (args->options.ca_file.empty()) {
      args->options.ca_file = recorded_ca_file(args->options.server);
    }
  });
  std::ostream* o = &out;
  std::ostream* e = &err;

  CLI::App* cluster =
      command(app, "cluster",
              "list clusters, show their nodes, burn them in, drain or retire them, mark outages");
  cluster->require_subcommand(1);
  command(*cluster, "list", "list clusters with health and GPU use")->callback([=] {
    finish(run_cluster_list(args->options, *o, *e));
  });
  CLI::App* nodes = command(*cluster, "nodes", "a cluster's nodes, their health and recent events");
  nodes->add_option("NAME", args->name, "cluster name")->required();
  nodes->add_option("--limit", args->limit, "node events to show (default 50)")
      ->check(CLI::Range(1, 1000));
  nodes->callback(
      [=] { finish(run_cluster_nodes(args->options, args->name, args->limit, *o, *e)); });
  CLI::App* outage =
      command(*cluster, "outage", "simulate an outage of a local site (--down) or end it (--up)");
  outage->add_option("NAME", args->name, "cluster name")->required();
  CLI::Option* down = outage->add_flag("--down", args->down, "mark the cluster down");
  CLI::Option* up = outage->add_flag("--up", args->up, "mark the cluster up again");
  down->excludes(up);
  outage->callback([=] {
    if (!args->down && !args->up) throw CLI::RequiredError("--down or --up");
    finish(run_cluster_outage(args->options, args->name, args->down, *o, *e));
  });
  add_cluster_health_commands(*cluster, args, o, e);

  CLI::App* job = command(app, "job", "submit, list, inspect and cancel jobs");
  job->require_subcommand(1);
  CLI::App* submit = command(*job, "submit",
                             "submit a job spec (YAML); prints the new id (a sweep: one per line)");
  submit->add_option("FILE", args->file, "job spec file")->required();
  submit->add_option("--workdir-limit", args->workdir_limit,
                     "refuse a workdir: with more than this many bytes of files, such as 1GiB "
                     "(default 256MiB)");
  submit->add_flag("-f,--follow", args->follow,
                   "then print the job's events (stderr) and log (stdout) until it ends; exit 0 "
                   "when it succeeded, 1 when it failed or was cancelled");
  // One value each (-e A=1 FILE: FILE is not a second variable).
  submit
      ->add_option("-e,--env", args->submit.overrides.env,
                   "KEY=VALUE: set (or add) a variable of the job's env (repeat for more)")
      ->allow_extra_args(false);
  submit
      ->add_option("--set", args->submit.overrides.sets,
                   "path=value: set any key of the spec by its dotted path, such as "
                   "resources.gpus_per_node=4 or priority=10 (repeat for more)")
      ->allow_extra_args(false);
  submit
      ->add_option("--after", args->submit.overrides.after,
                   "NAME|ID[:succeeded|ended]: start only once that job succeeded (or ended), "
                   "with its newest verified checkpoint in ORCH_AFTER_<NAME>_CHECKPOINT (repeat "
                   "for more)")
      ->allow_extra_args(false);
  submit->add_flag("--queue-anyway", args->submit.queue_anyway,
                   "keep a job no configured cluster could ever hold, waiting for a cluster "
                   "still to come (otherwise it is refused with each cluster's largest shape)");
  submit->callback([=] {
    std::uint64_t limit = kDefaultWorkdirLimit;
    if (!args->workdir_limit.empty()) {
      auto parsed = parse_size(args->workdir_limit);
      if (!parsed) {
        throw CLI::ValidationError("--workdir-limit",
                                   "a size such as 512MiB or 2GiB, got " + args->workdir_limit);
      }
      limit = *parsed;
    }
    finish(args->follow
               ? run_job_submit_follow(args->options, args->file, *o, *e, limit, {}, args->submit)
               : run_job_submit(args->options, args->file, *o, *e, limit, args->submit));
  });

  CLI::App* list = command(*job, "list", "list jobs");
  list->add_option("--state", args->state, "only jobs in this state")
      ->check(CLI::IsMember(job_state_names()));
  list->add_option("--cluster", args->cluster, "only jobs whose latest attempt ran there");
  list->add_option("--owner", args->owner, "only jobs this user submitted");
  list->add_option("--team", args->team, "only jobs of this team");
  list->add_option("--group", args->group, "only jobs of this group (a sweep's name)");
  list->add_option("--limit", args->limit, "jobs per page (1 to 1000; default 100)")
      ->check(CLI::Range(1, 1000));
  list->add_option("--cursor", args->cursor, "the page after this one (printed with the list)");
  list->callback([=] {
    finish(run_job_list(args->options,
                        {args->state, args->cluster, args->owner, args->team, args->group,
                         args->limit, args->cursor},
                        *o, *e));
  });

  CLI::App* show = command(*job, "show", "a job's fields, attempts and recent events");
  add_id(show, *args);
  show->add_flag("--series", args->series,
                 "the run as a series instead: per attempt, sparklines of loss, tokens/s and MFU");
  show->add_flag("--json", args->json, "print the server's JSON (as -o json)");
  show->callback([=] {
    if (args->json) args->options.output = "json";
    finish(args->series ? run_job_series(args->options, args->id, *o, *e)
                        : run_job_show(args->options, args->id, *o, *e));
  });

  // Top level, as the issue names it: `orchestrate plan JOB`.
  CLI::App* plan = command(app, "plan",
                           "a job's checkpoint interval from its measured save time and MTBF, "
                           "with the ETTR expected around it");
  add_id(plan, *args);
  plan->callback([=] { finish(run_plan(args->options, args->id, *o, *e)); });

  CLI::App* logs = command(*job, "logs", "print a job's log");
  add_id(logs, *args);
  logs->add_option("--attempt", args->attempt, "attempt number (default: the latest)")
      ->check(CLI::PositiveNumber);
  logs->add_flag("-f,--follow", args->follow,
                 "keep printing, attempt after attempt, until the job ends");
  CLI::Option* rank =
      logs->add_option("--rank", args->rank, "only this task's lines (a gang's global rank)")
          ->check(CLI::Validator(check_rank, "RANK", "rank"));
  CLI::Option* node = logs->add_option("--node", args->node, "only the lines of this node's tasks");
  logs->add_flag("--raw", args->raw,
                 "the log exactly as stored (protocol lines too; by default they are hidden)")
      ->excludes(rank)
      ->excludes(node);
  logs->callback([=] {
    LogsRequest request;
    request.id = args->id;
    if (args->attempt > 0) request.attempt = args->attempt;
    request.follow = args->follow;
    request.filter.raw = args->raw;
    if (args->rank >= 0) request.filter.rank = args->rank;
    request.filter.node = args->node;
    finish(run_job_logs(args->options, request, *o, *e));
  });

  CLI::App* explain = command(*job, "explain", "why the job was placed where it was, or not");
  add_id(explain, *args);
  explain->callback([=] { finish(run_job_explain(args->options, args->id, *o, *e)); });

  CLI::App* cancel =
      command(*job, "cancel", "cancel jobs: by id, or every job of a group (a sweep's points)");
  CLI::Option* ids =
      cancel->add_option("ID", args->ids, "job id (several: each one)")->check(CLI::PositiveNumber);
  cancel->add_option("--group", args->group, "every job of this group not ended yet")
      ->excludes(ids);
  cancel->callback([=] {
    if (args->ids.empty() && args->group.empty()) throw CLI::RequiredError("ID or --group");
    finish(run_job_cancel_many(args->options, args->ids, args->group, *o, *e));
  });

  add_health_commands(app, args, o, e);
  add_data_commands(app, args, o, e);
  add_access_commands(app, args, o, e);

  // Hidden (group ""): what the completion scripts call for the server's names.
  CLI::App* complete = command(app, "__complete", "words for shell completion");
  complete->group("");
  complete->add_option("KIND", args->name, "jobs, clusters, nodes, states or classes")
      ->required()
      ->check(CLI::IsMember(completion_kinds()));
  complete->callback([=] {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    finish(run_complete(args->options, args->name,
                        std::chrono::duration_cast<std::chrono::milliseconds>(now).count(), *o));
  });
}

void add_client_commands(CLI::App& app) {
  add_client_commands(app, std::cout, std::cerr);
}

}  // namespace orch
