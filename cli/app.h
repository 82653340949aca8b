#pragma once
// The whole `orchestrate` command line: client commands, serve and demo.

#include <string>

namespace CLI {
class App;
}

namespace orch {

// Adds every command (client commands, serve, demo, simulate, completion, the hidden
// __complete) with their help examples, and --version, to app.
void build_app(CLI::App& app);

// "orchestrate 0.4.0 (commit 1a2b3c4d5e6f, Dev build)": what --version prints.
std::string version_text();
int run_app(int argc, const char* const* argv);

}  // namespace orch
