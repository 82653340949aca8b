// orchestrate-agent: the small program that runs beside a job. Today it has one subcommand,
// `run`; `probe` and heartbeats come later. Exit status 2 means bad usage.

#include <cstdio>
#include <string>
#include <vector>

#include "agents/run_command.h"

namespace {

constexpr const char* kUsage =
    "usage: orchestrate-agent run --events FILE [--lock-fd N] [--grace-ms MS] -- CMD [ARGS...]\n"
    "  Runs CMD as a child, forwards SIGTERM/SIGINT/SIGHUP/SIGUSR1 to it, appends JSON\n"
    "  events (start, exit) to FILE and exits with the child's status (128+signal if killed).\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] != "run") {
    std::fprintf(stderr, "orchestrate-agent: unknown command '%s'\n%s", args[0].c_str(), kUsage);
    return 2;
  }
  orch::agent::RunOptions options;
  std::string error;
  if (!orch::agent::parse_run_options({args.begin() + 1, args.end()}, &options, &error)) {
    std::fprintf(stderr, "orchestrate-agent: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  return orch::agent::run_command(options);
}
