#pragma once
// The server-side commands, `orchestrate serve` and `orchestrate demo`, as plain functions that
// return an exit code. Their CLI11 wiring is in app.cpp.

#include <optional>
#include <string>

namespace orch {

struct ServeOptions {
  std::string config;
  std::string state;
  std::optional<int> port;
  std::optional<std::string> bind;
  std::string agent;
  bool insecure_bind = false;
  // The user's CLI config (cli/user_config.h) gets this server's URL, unless no_record; ca_file:
  // the CA clients should trust for an https server (serve --ca, default $ORCH_CA).
  bool no_record = false;
  std::string ca_file;
};

// Runs the server until SIGINT or SIGTERM; SIGHUP reads the clusters file again.
int run_serve(const ServeOptions& options);

struct DemoOptions {
  int steps = 1200;
  int checkpoint_every = 50;
  int outage_at_step = 500;
  bool keep = false;
};

// The tour: a job, an outage, a resume; exits non-zero when the resume was not as promised.
int run_demo(const DemoOptions& options);

}  // namespace orch
