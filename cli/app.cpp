// CLI11 wiring of every command. The work lives in client_commands.cpp (client), and in
// serve_command.cpp and demo_command.cpp (server side).
#include "cli/app.h"

#include <iostream>
#include <memory>

#include "cli/build_info.h"
#include "cli/client_cli.h"
#include "cli/completion.h"
#include "cli/help_examples.h"
#include "server/server_commands.h"
#include "server/simulate_command.h"

namespace orch {
namespace {

void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd =
      app.add_subcommand("serve", "Run the orchestrate server (REST API, brain, site workers)");
  cmd->add_option("--config", o->config, "Clusters file (YAML)")->required();
  cmd->add_option("--state", o->state, "State directory (SQLite database, local sites)")
      ->required();
  cmd->add_option("--port", o->port, "Port to listen on (overrides server.port; 0 = any free)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--bind", o->bind, "Address to listen on (overrides server.bind)");
  cmd->add_option("--agent", o->agent, "Path of orchestrate-agent (default: beside this binary)");
  cmd->add_flag(
      "--insecure-bind", o->insecure_bind,
      "Allow --bind to an address other than loopback without TLS (a warning each start)");
  o->ca_file = default_ca_file();
  cmd->add_option("--ca", o->ca_file,
                  "For an https server: the CA file clients should trust, recorded with the URL "
                  "(default: $ORCH_CA)");
  cmd->add_flag("--no-record", o->no_record,
                "Do not record this server's URL in your CLI config (~/.config/orchestrate/"
                "config.json; by default the CLI on this machine then finds it without --server)");
  cmd->callback([o] {
    int rc = run_serve(*o);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

void add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd =
      app.add_subcommand("demo", "Run a job on a local site, lose the site, resume elsewhere");
  cmd->add_option("--steps", o->steps, "Training steps")->check(CLI::Range(50, 100000));
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "Steps between checkpoints")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--outage-at-step", o->outage_at_step, "Take alpha down at about this step")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--keep", o->keep, "Keep the state directory for inspection");
  cmd->callback([o] {
    int rc = run_demo(*o);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

void add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  auto* cmd = app.add_subcommand(
      "simulate", "Run a scenario's policies over simulated clusters and compare them");
  cmd->add_option("SCENARIO", o->scenario,
                  "Scenario file (YAML), e.g. examples/simulate/lottery.yaml or a fleet's, "
                  "examples/simulate/fleet-quotas.yaml");
  cmd->add_option("--compare", o->compare,
                  "Two fleet scenarios run on the same seeds: their paired differences")
      ->expected(2);
  cmd->add_option("--seeds", o->seeds, "Seeds to run (overrides the scenario's)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", o->seed, "First seed (overrides the scenario's)")
      ->check(CLI::Range(0, 1000000000));
  cmd->add_option(
         "--policy", o->policies,
         "Policy to run (repeat for several): orchestrate, restart-in-place, failover-only")
      ->check(CLI::IsMember({"orchestrate", "restart-in-place", "failover-only"}));
  cmd->add_option("--json", o->json_file, "Also write the JSON report to this file");
  cmd->add_option("--chart", o->chart_file, "Also write an SVG chart to this file");
  cmd->add_flag("--quiet", o->quiet, "No line per run on stderr");
  cmd->callback([o, &app] {
    if (auto* output = app.get_option_no_throw("--output"); output && output->count() > 0) {
      o->output = output->as<std::string>();
    }
    if (o->scenario.empty() && o->compare.empty()) {
      throw CLI::ValidationError("SCENARIO", "a scenario file, or --compare A.yaml B.yaml");
    }
    int rc = run_simulate(*o, std::cout, std::cerr);
    if (rc != kExitOk) throw CLI::RuntimeError(rc);
  });
}

// `completion bash|zsh`: the script for the whole command tree, this command included.
void add_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "completion", "Print a shell completion script: source <(orchestrate completion bash)");
  cmd->add_option("SHELL", *shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  cmd->callback([&app, shell] { std::cout << completion_script(app, *shell, "orchestrate"); });
}

}  // namespace

std::string version_text() {
  return std::string("orchestrate ") + ORCH_VERSION + " (commit " + build_commit() + ", " +
         build_type() + " build)";
}

void build_app(CLI::App& app) {
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text(), "Print the version, commit and build type");
  add_client_commands(app);
  add_serve_command(app);
  add_demo_command(app);
  add_simulate_command(app);
  add_completion_command(app);
  add_help_examples(app);
}

int run_app(int argc, const char* const* argv) {
  CLI::App app{"orchestrate: one control plane for training jobs on many rented clusters",
               "orchestrate"};
  build_app(app);
  if (argc <= 1) {
    // A bare `orchestrate`: the command list, as --help prints it.
    std::cout << app.help();
    return kExitOk;
  }
  return parse_and_run(app, argc, argv, std::cout, std::cerr);
}

}  // namespace orch
