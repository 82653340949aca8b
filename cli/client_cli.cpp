// CLI11 wiring for the client commands; the work itself is in client_commands.cpp.
#include <iostream>
#include <memory>

#include "cli/client_cli.h"

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
};

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

}  // namespace

void add_client_commands(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<Args>();
  args->options.server = default_server_url();
  app.add_option("--server", args->options.server,
                 "orchestrate server URL (default: $ORCH_URL, else http://127.0.0.1:8080)");
  app.add_option("-o,--output", args->options.output, "output format: table or json")
      ->check(CLI::IsMember({"table", "json"}));
  std::ostream* o = &out;
  std::ostream* e = &err;

  CLI::App* cluster = command(app, "cluster", "list clusters, show their nodes, mark outages");
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

  CLI::App* job = command(app, "job", "submit, list, inspect and cancel jobs");
  job->require_subcommand(1);
  CLI::App* submit = command(*job, "submit", "submit a job spec (YAML); prints the new id");
  submit->add_option("FILE", args->file, "job spec file")->required();
  submit->callback([=] { finish(run_job_submit(args->options, args->file, *o, *e)); });

  CLI::App* list = command(*job, "list", "list jobs");
  list->add_option("--state", args->state, "only jobs in this state");
  list->add_option("--cluster", args->cluster, "only jobs whose latest attempt ran there");
  list->callback([=] { finish(run_job_list(args->options, args->state, args->cluster, *o, *e)); });

  CLI::App* show = command(*job, "show", "a job's fields, attempts and recent events");
  add_id(show, *args);
  show->callback([=] { finish(run_job_show(args->options, args->id, *o, *e)); });

  CLI::App* logs = command(*job, "logs", "print a job's log");
  add_id(logs, *args);
  logs->add_option("--attempt", args->attempt, "attempt number (default: the latest)")
      ->check(CLI::PositiveNumber);
  logs->add_flag("-f,--follow", args->follow, "keep printing until the job ends");
  logs->callback([=] {
    std::optional<int> attempt;
    if (args->attempt > 0) attempt = args->attempt;
    finish(run_job_logs(args->options, args->id, attempt, args->follow, *o, *e));
  });

  CLI::App* explain = command(*job, "explain", "why the job was placed where it was, or not");
  add_id(explain, *args);
  explain->callback([=] { finish(run_job_explain(args->options, args->id, *o, *e)); });

  CLI::App* cancel = command(*job, "cancel", "cancel a job");
  add_id(cancel, *args);
  cancel->callback([=] { finish(run_job_cancel(args->options, args->id, *o, *e)); });
}

void add_client_commands(CLI::App& app) {
  add_client_commands(app, std::cout, std::cerr);
}

int parse_and_run(CLI::App& app, int argc, const char* const* argv, std::ostream& out,
                  std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command failed and already said why
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e, out, err);  // prints help, or the usage error
    return rc == 0 ? kExitOk : kExitUsage;
  }
  return kExitOk;
}

}  // namespace orch
