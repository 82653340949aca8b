// orchestrate-agent: the small program that runs beside a job on each node. Subcommands: `run`
// (wrap a job or one task of a gang: signals, output relay, progress, heartbeats, hang, exit) and
// `probe` (check the node and print one JSON line) and `install` (copy the agent elsewhere: the
// Kubernetes init container's job). Exit status 2 means bad usage.

#include <cstdio>
#include <string>
#include <vector>

#include "agents/install_command.h"
#include "agents/probe_command.h"
#include "agents/run_command.h"

namespace {

constexpr const char* kUsage =
    "usage: orchestrate-agent run --events FILE [--node-name NAME] [--lock-fd N] [--grace-ms MS]\n"
    "                             [--heartbeat-s S] [--hang-after-s S] [--run-as USER]\n"
    "                             [--io-stall-after-s S] [--push-url URL] [--push-every-s S]\n"
    "                             [--watch-s S] [--kernel-log PATH] [--nvidia-smi PATH|none]\n"
    "                             [--gpu-sample-s S] [--fault-action record|stop]\n"
    "                             [--node-rank R --nnodes N --tasks-per-node K --local-rank L\n"
    "                              --master-addr HOST --master-port P |\n"
    "                              --place-from slurm --master-addr HOST --master-port P]\n"
    "                             -- CMD [ARGS...]\n"
    "  Runs CMD as a child, forwards SIGTERM/SIGINT/SIGHUP/SIGUSR1/SIGUSR2 to it, relays its "
    "stdout,\n"
    "  appends JSON events (start, progress, checkpoint, heartbeat, hang, exit) to FILE and\n"
    "  exits with the child's status (128+signal if killed). With a place in a gang, CMD gets\n"
    "  ORCH_NODE_RANK, RANK, WORLD_SIZE, MASTER_ADDR, ... and the relay writes whole lines;\n"
    "  in FILE, %t is the task rank, %n the node rank and %% a '%'. --run-as: CMD runs as USER\n"
    "  (the agent must be root; it stays root itself). With a push URL and ORCH_PUSH_CREDENTIAL,\n"
    "  the records also go to the server over HTTPS (ORCH_PUSH_CA: the PEM to trust).\n"
    "       orchestrate-agent probe [--node NAME] [--dir DIR] [--io-bytes N] [--compute-s S]\n"
    "                               [--nvidia-smi PATH|none] [--kernel-log PATH]\n"
    "                               [--min-free-bytes N] [--max-gpu-temp C]\n"
    "                               [--nvidia-smi-timeout-s S]\n"
    "  Checks this node (GPUs, Xid events, filesystem, CPU) and prints one JSON line.\n"
    "       orchestrate-agent install DEST\n"
    "  Copies this agent to DEST (atomically, mode 0755): how an init container puts it in a\n"
    "  volume the job's container shares.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  std::string error;
  if (args[0] == "run") {
    orch::agent::RunOptions options;
    if (!orch::agent::parse_run_options(rest, &options, &error)) {
      std::fprintf(stderr, "orchestrate-agent: %s\n%s", error.c_str(), kUsage);
      return 2;
    }
    return orch::agent::run_command(options);
  }
  if (args[0] == "probe") {
    orch::agent::ProbeOptions options;
    if (!orch::agent::parse_probe_options(rest, &options, &error)) {
      std::fprintf(stderr, "orchestrate-agent: %s\n%s", error.c_str(), kUsage);
      return 2;
    }
    return orch::agent::probe_command(options);
  }
  if (args[0] == "install") {
    orch::agent::InstallOptions options;
    if (!orch::agent::parse_install_options(rest, &options, &error)) {
      std::fprintf(stderr, "orchestrate-agent: %s\n%s", error.c_str(), kUsage);
      return 2;
    }
    return orch::agent::install_command(options);
  }
  std::fprintf(stderr, "orchestrate-agent: unknown command '%s'\n%s", args[0].c_str(), kUsage);
  return 2;
}
