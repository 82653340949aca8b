#pragma once
// A fake API server per test (in-process, on a free port, with a PKI made once per binary),
// the REAL kubectl pointed at it through a generated kubeconfig, and REST helpers.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/fake_kube_server.h"
#include "testkit/fake_kube/kube_test_client.h"
#include "testkit/fake_kube/test_pki.h"
#include "testkit/server_process.h"

namespace orch::fake_kube::testing {

using nlohmann::json;
using namespace std::chrono_literals;

inline constexpr const char* kKubectl = "/usr/bin/kubectl";

// One PKI for the whole binary: openssl runs three times, not three times per test.
inline const TestPki& shared_pki() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/fake-kube-pki-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    return std::string(tmpl);
  }();
  static const TestPki pki = make_test_pki(dir);
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup;
  return pki;
}

class FakeKubeTest : public ::testing::Test {
 protected:
  // Nodes the server starts with; a test may change it before calling start_server().
  std::vector<NodeConfig> nodes = uniform_nodes(2, 8);

  void SetUp() override {
    const TestPki& pki = shared_pki();
    token_ = random_token();
    state_ = dir_.path() + "/state";
    (void)pki;
  }

  void TearDown() override {
    if (server_) server_->stop();
  }

  void start_server() {
    const TestPki& pki = shared_pki();
    FakeKubeOptions options;
    options.cert_file = pki.server_cert;
    options.key_file = pki.server_key;
    options.token = token_;
    options.cluster.state_dir = state_;
    options.cluster.nodes = nodes;
    options.cluster.namespaces = {"default", "team"};
    server_ = std::make_unique<FakeKubeServer>(options);
    server_->start();
    endpoint_ = {"127.0.0.1", server_->port(), pki.ca_cert, token_};
    kubeconfig_ = dir_.path() + "/kubeconfig";
    write_kubeconfig(kubeconfig_, {server_->url(), pki.ca_cert, token_, "default"});
  }

  // kubectl --kubeconfig K --cache-dir C ARGS..., 20 s at most.
  e2e::ProcessResult kubectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kKubectl, "--kubeconfig", kubeconfig_, "--cache-dir",
                                     dir_.path() + "/kube-cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    return e2e::run_process(argv, 20000ms);
  }

  KubeReply call(const std::string& method, const std::string& target,
                 const std::string& body = "") {
    return kube_request(endpoint_, method, target, body);
  }
  json get(const std::string& target) {
    KubeReply r = call("GET", target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.error << r.body;
    return r.json();
  }
  json post(const std::string& target, const json& body, int expect = 201) {
    KubeReply r = call("POST", target, body.dump());
    EXPECT_EQ(r.status, expect) << target << ": " << r.error << r.body;
    return r.json();
  }

  // Polls GET target until pred holds (returns the object) or the deadline passes (fails the
  // test with the last object).
  json wait_for(const std::string& target, const std::function<bool(const json&)>& pred,
                std::chrono::milliseconds timeout = 15000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    json last;
    for (;;) {
      last = call("GET", target).json();
      if (!last.is_null() && pred(last)) return last;
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "timed out waiting on " << target << "; last: " << last.dump(1);
    return last;
  }

  // The pods of a job (by the job-name label) in namespace ns.
  json job_pods(const std::string& job, const std::string& ns = "default") {
    return get("/api/v1/namespaces/" + ns + "/pods?labelSelector=job-name%3D" + job)["items"];
  }

  // Waits for the job's first pod to reach phase, returns it.
  json wait_pod_phase(const std::string& job, const std::string& phase,
                      const std::string& ns = "default") {
    json pod;
    wait_for("/api/v1/namespaces/" + ns + "/pods?labelSelector=job-name%3D" + job,
             [&](const json& list) {
               for (const json& p : list["items"]) {
                 if (p["status"].value("phase", "") == phase) {
                   pod = p;
                   return true;
                 }
               }
               return false;
             });
    return pod;
  }

  // Safe accessors (a const json's operator[] must not meet a missing key): the first
  // condition of a list's first item, the last condition of an object; null when absent.
  static json first_item_condition(const json& list) {
    const json items = list.value("items", json::array());
    if (items.empty()) return json::object();  // the pod may not be listed yet
    const json conditions =
        items[0].value("status", json::object()).value("conditions", json::array());
    return conditions.empty() ? json(json::object()) : conditions[0];
  }
  static json last_condition(const json& object) {
    const json conditions =
        object.value("status", json::object()).value("conditions", json::array());
    return conditions.empty() ? json(json::object()) : conditions.back();
  }

  static json job(const std::string& name, const std::string& script,
                  const std::string& image = "busybox") {
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", name}, {"labels", {{"app", "fake-kube-test"}}}}},
            {"spec",
             {{"backoffLimit", 0},
              {"template",
               {{"spec",
                 {{"restartPolicy", "Never"},
                  {"terminationGracePeriodSeconds", 5},
                  {"containers", json::array({{{"name", "main"},
                                               {"image", image},
                                               {"command", {"/bin/sh", "-c", script}}}})}}}}}}}};
  }

  json create_job(const json& body, const std::string& ns = "default") {
    return post("/apis/batch/v1/namespaces/" + ns + "/jobs", body);
  }

  e2e::TempDir dir_;
  std::string token_;
  std::string state_;
  std::string kubeconfig_;
  KubeEndpoint endpoint_;
  std::unique_ptr<FakeKubeServer> server_;
};

inline bool process_alive(pid_t pid) {
  return pid > 0 && ::kill(pid, 0) == 0;
}

}  // namespace orch::fake_kube::testing
