// The `orchestrate` executable: client commands (cluster, job) and the composition root's
// server commands (serve, demo).
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/client_commands.h"
#include "cli/serve_command.h"

int main(int argc, char** argv) {
  CLI::App app{"orchestrate: one control plane for training jobs on many rented clusters",
               "orchestrate"};
  app.require_subcommand(1);
  orch::add_client_commands(app);
  orch::add_serve_command(app);
  orch::add_demo_command(app);
  return orch::parse_and_run(app, argc, argv, std::cout, std::cerr);
}
