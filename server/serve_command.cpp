// `orchestrate serve`: runs the server until SIGINT or SIGTERM.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/client_commands.h"
#include "cli/user_config.h"
#include "scheduler/spec/clusters_parser.h"
#include "server/required_programs.h"
#include "server/server.h"
#include "server/server_commands.h"

namespace orch {

int run_serve(const ServeOptions& o) {
  auto config = load_clusters_file(o.config);
  if (!config) {
    std::cerr << "error: " << config.error().message << "\n";
    return kExitUsage;
  }
  // Checked before anything starts: a missing rsync would otherwise surface as a failed
  // replication minutes later. Programs of providers not configured here are not required.
  const char* path = std::getenv("PATH");
  if (auto missing = missing_programs(config->clusters, path ? path : ""); !missing.empty()) {
    std::cerr << "error: orchestrate serve cannot start: " << missing_programs_message(missing);
    return kExitServerError;
  }
  // Block the stop signals in every thread; this one waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);  // not a stop: the clusters file is read again
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  ServerSettings s;
  s.state_dir = o.state;
  s.port = o.port;
  s.bind = o.bind;
  s.agent_path = o.agent;
  s.config_path = o.config;
  s.insecure_bind = o.insecure_bind;
  auto server = Server::start(*config, s);
  if (!server) {
    std::cerr << "error: " << server.error().message << "\n";
    return server.error().kind == ErrorKind::invalid ? kExitUsage : kExitServerError;
  }
  // Recorded before the serving line, so that whoever waits for that line finds it recorded.
  if (!o.no_record) record_serving_url((*server)->url(), o.ca_file, std::cout, std::cerr);
  std::cout << "orchestrate: serving " << config->clusters.size() << " cluster(s) on "
            << (*server)->url() << " with state in " << o.state << std::endl;
  int sig = 0;
  while (sigwait(&stop_signals, &sig) == 0 && sig == SIGHUP) {
    auto reloaded = (*server)->reload();
    if (reloaded) {
      std::cout << "orchestrate: " << reloaded->value("message", "") << std::endl;
    } else {
      std::cerr << "orchestrate: " << reloaded.error().message << std::endl;
    }
  }
  std::cout << "orchestrate: stopping (signal " << sig << ")" << std::endl;
  (*server)->stop();
  return kExitOk;
}

}  // namespace orch
