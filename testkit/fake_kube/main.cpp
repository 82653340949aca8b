// fake-kube-apiserver: the fake Kubernetes API server as a program (see README.md).
//   fake-kube-apiserver --cert server.crt --key server.key --token T --state-dir DIR
//                       [--port 0] [--node n0:8[:PRODUCT]]... [--nodes-json FILE] [--namespace
//                       NS]... [--image-map IMAGE=PATH]... [--agent-binary PATH]
// Prints "listening on https://127.0.0.1:PORT" once it serves; SIGTERM or SIGINT stop it
// (every pod process is killed).

#include <signal.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "testkit/fake_kube/fake_kube_server.h"

int main(int argc, char** argv) {
  using namespace orch::fake_kube;
  CLI::App app{"A fake Kubernetes API server for tests: pods run as local processes"};
  FakeKubeOptions options;
  std::string token_file;
  std::string nodes_json;
  std::vector<std::string> node_flags;
  std::vector<std::string> image_maps;
  bool verbose = false;
  app.add_option("--bind", options.bind, "address to listen on")->capture_default_str();
  app.add_option("--port", options.port, "port (0: a free one)")->capture_default_str();
  app.add_option("--cert", options.cert_file, "server certificate (PEM)")->required();
  app.add_option("--key", options.key_file, "server private key (PEM)")->required();
  app.add_option("--token", options.token, "the bearer token clients must send");
  app.add_option("--token-file", token_file, "read the token from this file");
  app.add_option("--state-dir", options.cluster.state_dir, "pod directories and logs")->required();
  app.add_option("--node", node_flags, "a node NAME:GPUS[:PRODUCT] (repeatable)");
  app.add_option("--nodes-json", nodes_json,
                 "a file with a JSON array of nodes [{\"name\",\"gpus\",\"product\",\"ready\","
                 "\"unschedulable\",\"labels\",\"taints\"}]");
  app.add_option("--namespace", options.cluster.namespaces, "namespaces besides default");
  app.add_option("--image-map", image_maps,
                 "IMAGE=PATH: containers of IMAGE run PATH (a directory standing for the image's "
                 "root, or its one program) (repeatable)");
  app.add_option("--agent-binary", options.cluster.agent_binary,
                 "what images named *orchestrate-agent* run (default: this build's agent)")
      ->capture_default_str();
  app.add_flag("--verbose", verbose, "log every request to stderr");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!token_file.empty()) {
      std::ifstream in(token_file);
      std::getline(in, options.token);
    }
    if (options.token.empty()) throw std::runtime_error("--token or --token-file is required");
    if (!nodes_json.empty()) {
      std::ifstream in(nodes_json);
      if (!in) throw std::runtime_error("cannot read " + nodes_json);
      options.cluster.nodes = parse_node_configs(nlohmann::json::parse(in));
    } else if (!node_flags.empty()) {
      options.cluster.nodes.clear();
      for (const auto& n : node_flags) options.cluster.nodes.push_back(parse_node_flag(n));
    }
    ImageMap images;
    for (const auto& m : image_maps) add_image_mapping(images, m);
    options.cluster.image_map = images.images;
    if (verbose) options.request_log = &std::cerr;

    // Signals are taken by sigwait below; every thread inherits the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    FakeKubeServer server(options);
    server.start();
    std::cout << "listening on " << server.url() << std::endl;
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fake-kube-apiserver: " << e.what() << std::endl;
    return 1;
  }
}
