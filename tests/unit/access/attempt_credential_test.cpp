// The credential an attempt's agents push home with (web/access/attempt_credential.h, issue 44):
// derived from the launch token under the server's key, matching that token only, and the key
// kept owner-only in access.db so that a restarted server takes the credentials agents hold.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "scheduler/common/clock.h"
#include "web/access/access_store.h"
#include "web/access/attempt_credential.h"

namespace orch::testing {
namespace {

const std::string kToken = "orch-7-1-1700000000000";

std::string test_key() {
  std::string key;
  for (int i = 0; i < 32; ++i) key.push_back(static_cast<char>(i));
  return key;
}

TEST(AttemptCredential, IsThePrefixAndTheHmacOfTheTokenUnderTheKey) {
  // python3: hmac.new(bytes(range(32)), b"attempt-push\n" + token, sha256).hexdigest()
  EXPECT_EQ(attempt_credential(test_key(), kToken),
            "orch_att_5b6b4283821f76e79d0205092a189ce20e5ca011a7d7fe28c8dcc26365bc393d");
}

TEST(AttemptCredential, MatchesItsOwnTokenOnly) {
  const std::string key = test_key();
  const std::string credential = attempt_credential(key, kToken);
  EXPECT_TRUE(attempt_credential_matches(key, kToken, credential));
  EXPECT_FALSE(attempt_credential_matches(key, "orch-7-2-1700000000000", credential));
  EXPECT_FALSE(attempt_credential_matches(key, "", credential));
  std::string other_key = key;
  other_key[0] = 'x';
  EXPECT_FALSE(attempt_credential_matches(other_key, kToken, credential));
  std::string changed = credential;
  changed.back() = changed.back() == '0' ? '1' : '0';
  EXPECT_FALSE(attempt_credential_matches(key, kToken, changed));
  EXPECT_FALSE(attempt_credential_matches(key, kToken, credential.substr(0, 40)));
  EXPECT_FALSE(attempt_credential_matches(key, kToken, credential + "0"));
  EXPECT_TRUE(is_attempt_credential(credential));
  EXPECT_FALSE(is_attempt_credential("orch_" + std::string(64, 'a')));
}

class AttemptKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/orch-attempt-key-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::unique_ptr<AccessStore> open(const std::string& name) {
    auto store = AccessStore::open(dir + "/" + name, clock);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(*store) : nullptr;
  }
  FakeClock clock;
  std::string dir;
};

TEST_F(AttemptKeyTest, TheKeyIsMadeOnceKeptOwnerOnlyAndTheSameAfterARestart) {
  std::string credential;
  {
    auto store = open("access.db");
    ASSERT_TRUE(store);
    credential = store->attempt_credential(kToken);
    EXPECT_TRUE(store->attempt_credential_valid(kToken, credential));
    EXPECT_FALSE(store->attempt_credential_valid("orch-7-2-1700000000000", credential));
  }
  auto reopened = open("access.db");
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->attempt_credential(kToken), credential);
  EXPECT_TRUE(reopened->attempt_credential_valid(kToken, credential));
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/access.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto another_server = open("other.db");
  ASSERT_TRUE(another_server);
  EXPECT_NE(another_server->attempt_credential(kToken), credential);
  EXPECT_FALSE(another_server->attempt_credential_valid(kToken, credential));
}

TEST_F(AttemptKeyTest, NoTokenCanHoldTheAttemptRole) {
  auto store = open("access.db");
  ASSERT_TRUE(store);
  auto made = store->create_token("agent", Role::attempt, "test");
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().kind, ErrorKind::invalid);
  EXPECT_FALSE(parse_role("attempt").has_value()) << "nor can one be asked for by name";
}

}  // namespace
}  // namespace orch::testing
