// `orchestrate-agent run` pushing its records home (issue 44), end to end: the real agent binary
// runs a short command and pushes over real TLS to a server in this process (push_test_server.h)
// with certificates made by the openssl CLI (testkit/fake_kube/test_pki.h).

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/test_pki.h"
#include "tests/unit/agent/agent_test_util.h"
#include "tests/unit/agent/push_test_server.h"

namespace orch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kCredential = "orch_att_0123456789abcdef-secret";

// A task that reports progress and a checkpoint, and says whether it can see the credential.
constexpr const char* kJob =
    R"(echo "@orchestrate {\"event\":\"progress\",\"step\":1}"; sleep 0.3;
echo "@orchestrate {\"event\":\"checkpoint\",\"step\":1,\"path\":\"/ck/1\"}"; sleep 0.3;
echo "credential=${ORCH_PUSH_CREDENTIAL:-none}")";

class PushTest : public TempDirTest {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "orch-push-pki-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    pki_dir_ = tmpl;
    pki_ = fake_kube::make_test_pki(pki_dir_ + "/ours", "push-test");
    other_ = fake_kube::make_test_pki(pki_dir_ + "/other", "unrelated");
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(pki_dir_, ec);
  }

  std::string events_path() const { return dir_ + "/events.jsonl"; }
  std::vector<json> events() const { return json_lines<json>(events_path()); }
  // The push environment with `ca_file`'s PEM as ORCH_PUSH_CA.
  static std::string push_env(const std::string& ca_file) {
    return std::string("ORCH_PUSH_CREDENTIAL=") + kCredential +
           " ORCH_LAUNCH_TOKEN=tok/7 ORCH_PUSH_CA=\"$(cat " + ca_file + ")\"";
  }
  int run_pushing(const std::string& env, const std::string& url, const std::string& flags = "") {
    return agent_env(env, "run --events " + events_path() + " --node-name n1 --heartbeat-s 0.2" +
                              " --push-url " + url + " --push-every-s 0.1 " + flags +
                              " -- sh -c '" + kJob + "'");
  }
  void expect_no_credential_in_output() const {
    EXPECT_THAT(out(), Not(HasSubstr(kCredential)));
    EXPECT_THAT(err(), Not(HasSubstr(kCredential)));
  }
  // Each stored record is the event file's line of the same place plus its seq, 1, 2, 3, ...
  void expect_stored_is_the_event_file(const std::vector<json>& stored) const {
    const std::vector<json> lines = events();
    ASSERT_EQ(stored.size(), lines.size());
    for (size_t i = 0; i < stored.size(); ++i) {
      json record = stored[i];
      EXPECT_EQ(record["seq"], i + 1);
      record.erase("seq");
      EXPECT_EQ(record, lines[i]) << "record " << i + 1;
    }
    EXPECT_EQ(stored.front()["event"], "start");
    EXPECT_EQ(stored.back()["event"], "exit");
  }

  static inline std::string pki_dir_;
  static inline fake_kube::TestPki pki_;
  static inline fake_kube::TestPki other_;
};

TEST_F(PushTest, TheRecordsOfARunArriveInOrderEachOnceWithTheirSeq) {
  PushTestServer server(pki_.server_cert, pki_.server_key);
  ASSERT_EQ(run_pushing(push_env(pki_.ca_cert), server.url()), 0) << err();
  const std::vector<json> stored = server.stored();
  expect_stored_is_the_event_file(stored);
  std::vector<std::string> kinds;
  for (const json& r : stored) kinds.push_back(r["event"]);
  EXPECT_THAT(kinds, ::testing::IsSupersetOf({"start", "progress", "checkpoint", "heartbeat"}));
  for (const auto& request : server.requests()) {
    EXPECT_EQ(request.target, "/api/v1/attempts/tok%2F7/records");
    EXPECT_EQ(request.authorization, std::string("Bearer ") + kCredential);
    EXPECT_EQ(request.content_type, "application/json");
    EXPECT_EQ(request.body["rank"], 0);
    EXPECT_EQ(request.body["node"], "n1");
    EXPECT_LE(request.body["records"].size(), 256u);
  }
  EXPECT_THAT(out(), HasSubstr("credential=none")) << "the job does not inherit the credential";
  expect_no_credential_in_output();
}

TEST_F(PushTest, AServerAnswering503ForAWhileThen200GetsEveryRecordOnce) {
  PushTestServer server(pki_.server_cert, pki_.server_key);
  server.answer_next(2, 503);
  ASSERT_EQ(run_pushing(push_env(pki_.ca_cert), server.url()), 0) << err();
  expect_stored_is_the_event_file(server.stored());
  // What the server acknowledged is never sent again.
  std::set<int> seen;
  for (const auto& request : server.requests()) {
    if (request.status != 200) continue;
    for (const json& r : request.body["records"]) {
      EXPECT_TRUE(seen.insert(r["seq"].get<int>()).second) << "seq " << r["seq"] << " twice";
    }
  }
  EXPECT_THAT(err(), HasSubstr("push: cannot push records: the server answered 503; retrying"));
  EXPECT_THAT(err(), HasSubstr("records pushed again after 2 failed tries"));
  expect_no_credential_in_output();
}

TEST_F(PushTest, AServerTheGivenCaDidNotSignGetsNothingAndTheJobRunsOn) {
  PushTestServer server(pki_.server_cert, pki_.server_key);
  ASSERT_EQ(run_pushing(push_env(other_.ca_cert), server.url()), 0) << err();
  EXPECT_TRUE(server.requests().empty());
  EXPECT_GE(server.handshakes_failed(), 1);
  EXPECT_THAT(err(), HasSubstr("the server's certificate is not trusted"));
  EXPECT_THAT(err(), HasSubstr("the event file keeps them"));
  EXPECT_THAT(out(), HasSubstr("credential=none"));
  EXPECT_EQ(events().back()["event"], "exit");
  expect_no_credential_in_output();
}

TEST_F(PushTest, ACertificateForAnotherNameIsRefused) {
  const fake_kube::CertFiles named = fake_kube::make_test_cert(
      dir_, "named", "push-server", {pki_.ca_cert, pki_.ca_key},
      "subjectAltName=DNS:elsewhere.internal\nextendedKeyUsage=serverAuth\n");
  PushTestServer server(named.cert, named.key);
  ASSERT_EQ(run_pushing(push_env(pki_.ca_cert), server.url()), 0) << err();
  EXPECT_TRUE(server.requests().empty());
  EXPECT_THAT(err(), HasSubstr("not trusted"));
}

TEST_F(PushTest, TheServersOwnCertificateAsTheCaIsTrustedByName) {
  PushTestServer server(pki_.server_cert, pki_.server_key);
  const std::string url = "https://localhost:" + std::to_string(server.port());
  ASSERT_EQ(run_pushing(push_env(pki_.server_cert), url), 0) << err();
  expect_stored_is_the_event_file(server.stored());
}

TEST_F(PushTest, TheAttemptBeingOverStopsThePushingOnceAndForGood) {
  PushTestServer server(pki_.server_cert, pki_.server_key);
  server.answer_next(1'000, 410);
  ASSERT_EQ(run_pushing(push_env(pki_.ca_cert), server.url()), 0) << err();
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_THAT(err(), HasSubstr("push: the server says the attempt is over (410): pushing stopped"));
  EXPECT_EQ(events().back()["event"], "exit") << "the event file keeps every record";
}

// A TCP listener that never accepts: connects succeed (the kernel's backlog), then nothing.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::listen(fd_, 16) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~SilentListener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_F(PushTest, AServerThatNeverAnswersStallsNeitherTheJobNorTheAgentsExit) {
  SilentListener silent;
  ASSERT_NE(silent.port(), 0);
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(
      agent_env(push_env(pki_.ca_cert), "run --events " + events_path() +
                                            " --heartbeat-s 0.2 --push-url https://127.0.0.1:" +
                                            std::to_string(silent.port()) +
                                            " -- sh -c 'echo one; sleep 1.2; echo two'"),
      0);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The job's 1.2 s, then at most the 10 s the agent gives its last delivery, and a little.
  EXPECT_LT(took_s, 13.0);
  EXPECT_EQ(out(), "one\ntwo\n");
  // The poll loop kept its timers while the push thread waited on the server.
  int heartbeats = 0;
  for (const json& e : events()) heartbeats += e["event"] == "heartbeat";
  EXPECT_GE(heartbeats, 4);
  EXPECT_THAT(err(), HasSubstr("gave up on"));
  expect_no_credential_in_output();
}

TEST_F(PushTest, APushSetupThatCannotWorkIsRefusedBeforeTheJobRuns) {
  const std::string run = "run --events " + events_path() + " -- touch " + dir_ + "/ran";
  EXPECT_EQ(agent_env(push_env(pki_.ca_cert) + " ORCH_PUSH_URL=http://127.0.0.1:1", run), 2);
  EXPECT_THAT(err(), HasSubstr("must start with https://"));
  expect_no_credential_in_output();
  EXPECT_EQ(agent_env("-u ORCH_PUSH_URL " + push_env(pki_.ca_cert), run), 2);
  EXPECT_THAT(err(), HasSubstr("no push URL"));
  EXPECT_EQ(agent_env("-u ORCH_PUSH_CREDENTIAL ORCH_PUSH_URL=https://127.0.0.1:1", run), 2);
  EXPECT_THAT(err(), HasSubstr("ORCH_PUSH_CREDENTIAL is not"));
  EXPECT_EQ(agent_env(std::string("-u ORCH_LAUNCH_TOKEN ORCH_PUSH_CREDENTIAL=") + kCredential +
                          " ORCH_PUSH_URL=https://h:1",
                      run),
            2);
  EXPECT_THAT(err(), HasSubstr("needs ORCH_LAUNCH_TOKEN"));
  EXPECT_EQ(agent_env(std::string("ORCH_PUSH_CREDENTIAL=") + kCredential +
                          " ORCH_LAUNCH_TOKEN=t ORCH_PUSH_CA=junk ORCH_PUSH_URL=https://h:1",
                      run),
            2);
  EXPECT_THAT(err(), HasSubstr("ORCH_PUSH_CA holds no PEM certificate"));
  expect_no_credential_in_output();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/ran"));
}

}  // namespace
}  // namespace orch::testing
