#pragma once
// The whole `orchestrate` command line: client commands, serve and demo.

namespace orch {

int run_app(int argc, const char* const* argv);

}  // namespace orch
