#pragma once
// The fixture of the client-command tests: a real HttpServer on 127.0.0.1 over the fake backend
// (or a test's own FakeBackend subclass: CliServerTestOn<Backend>), ClientOptions pointing at it,
// and `cli(args)` to run `orchestrate ARGS...` through CLI11 with the client commands only,
// capturing out and err.

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/client_cli.h"
#include "tests/unit/web/fake_backend.h"
#include "web/api_routes.h"
#include "web/http/http_server.h"

namespace orch {

// What does not depend on the backend's type (kept out of the template: g++ 12 fails on the
// server's lambda inside one).
class CliServerHarness : public ::testing::Test {
 protected:
  void start_server(ApiBackend& backend) {
    router_ = std::make_unique<Router>(make_api_router(backend));
    server_ = std::make_unique<HttpServer>(
        ServerOptions{"127.0.0.1", 0},
        [this](const HttpRequest& request) { return router_->dispatch(request); });
    ASSERT_TRUE(server_->start().ok());
    options.server = "http://127.0.0.1:" + std::to_string(server_->port());
    options.poll_ms = 10;
  }
  // Runs `orchestrate ARGS...` through CLI11 with the client commands only.
  int cli(std::vector<std::string> args) {
    CLI::App app{"test", "orchestrate"};
    app.require_subcommand(1);
    add_client_commands(app, out, err);
    args.insert(args.begin(), "orchestrate");
    std::vector<const char*> argv;
    argv.reserve(args.size());
    for (auto& a : args) argv.push_back(a.c_str());
    return parse_and_run(app, static_cast<int>(argv.size()), argv.data(), out, err);
  }
  bool has(const std::string& needle) const { return out.str().find(needle) != std::string::npos; }

  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> server_;
  ClientOptions options;
  std::ostringstream out, err;
};

template <typename Backend>
class CliServerTestOn : public CliServerHarness {
 protected:
  void SetUp() override { start_server(backend); }
  // The server goes before the backend it answers from (a base's members outlive ours).
  void TearDown() override {
    server_.reset();
    router_.reset();
  }

  Backend backend;
};

using CliServerTest = CliServerTestOn<testing::FakeBackend>;

}  // namespace orch
