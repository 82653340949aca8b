#pragma once
// CLI11 wiring of the client commands. Only client_cli.cpp, app.cpp and the CLI tests include
// this header: CLI11 is header-only and slow to compile, so it stays out of everything else.

#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/client_commands.h"

namespace orch {

void add_client_commands(CLI::App& app, std::ostream& out, std::ostream& err);
void add_client_commands(CLI::App& app);  // std::cout / std::cerr

// Parses and runs; maps CLI11's usage errors to kExitUsage (help and version to 0) and a
// command's failure to its exit code. main() is this call; tests use it too.
int parse_and_run(CLI::App& app, int argc, const char* const* argv, std::ostream& out,
                  std::ostream& err);

}  // namespace orch
