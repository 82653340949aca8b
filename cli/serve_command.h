#pragma once
// The composition root's server-side commands: `orchestrate serve` and `orchestrate demo`.

#include <CLI/CLI.hpp>

namespace orch {

void add_serve_command(CLI::App& app);
void add_demo_command(CLI::App& app);

}  // namespace orch
