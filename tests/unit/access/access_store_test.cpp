// Tokens are random, shown once and kept only as hashes; a revoked one stops at once; the audit
// log pages newest first.
#include <gmock/gmock.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "scheduler/common/clock.h"
#include "web/access/access_store.h"
#include "web/access/token.h"

namespace orch::testing {
namespace {

std::unique_ptr<AccessStore> open_store(const std::string& path, const Clock& clock) {
  auto s = AccessStore::open(path, clock);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(AccessStore, ATokenIsRandomAndKeptOnlyAsItsHash) {
  FakeClock clock;
  const std::string path = ::testing::TempDir() + "/access_hash_test.db";
  std::remove(path.c_str());
  std::string token;
  {
    auto store = open_store(path, clock);
    ASSERT_TRUE(store);
    auto made = store->create_token("alice", Role::user, "ada");
    ASSERT_TRUE(made.ok());
    token = *made;
    EXPECT_TRUE(looks_like_token(token));
    auto other = store->create_token("bob", Role::user, "ada");
    ASSERT_TRUE(other.ok());
    EXPECT_NE(*other, token);
    const auto who = store->identify(token);
    ASSERT_TRUE(who);
    EXPECT_EQ(who->user, "alice");
    EXPECT_EQ(who->role, Role::user);
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_EQ(bytes.str().find(token.substr(5)), std::string::npos) << "the token is in the file";
  EXPECT_NE(bytes.str().find(token_hash(token)), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A restart reads the live tokens back.
  auto again = open_store(path, clock);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->identify(token));
}

TEST(AccessStore, ARevokedTokenStopsAtOnceAndItsNameMayHaveANewOne) {
  FakeClock clock;
  auto store = open_store(":memory:", clock);
  auto first = store->create_token("alice", Role::user, "ada");
  ASSERT_TRUE(first.ok());
  auto twice = store->create_token("alice", Role::admin, "ada");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().kind, ErrorKind::conflict);
  clock.advance_ms(1000);
  auto revoked = store->revoke_token("alice");
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(revoked->revoked_ms, clock.now_ms());
  EXPECT_FALSE(store->identify(*first));
  EXPECT_EQ(store->revoke_token("alice").error().kind, ErrorKind::not_found);
  auto second = store->create_token("alice", Role::viewer, "ada");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(store->identify(*second)->role, Role::viewer);
  auto rows = store->tokens();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_FALSE(rows->at(0).revoked_ms);  // live first
  EXPECT_TRUE(rows->at(1).revoked_ms);
}

TEST(AccessStore, NamesAndRolesAreChecked) {
  FakeClock clock;
  auto store = open_store(":memory:", clock);
  for (const std::string& bad : {std::string(""), std::string(65, 'a'), std::string("a b"),
                                 std::string("\xff"), std::string("a/b")}) {
    auto r = store->create_token(bad, Role::user, "ada");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  }
  EXPECT_FALSE(store->create_token("x", Role::open, "ada").ok());
  EXPECT_FALSE(store->has_live_admin());
  ASSERT_TRUE(store->create_token("root", Role::admin, "ada").ok());
  EXPECT_TRUE(store->has_live_admin());
}

TEST(AccessStore, ATokenIsBoundToTeamsWhichItsCallerCarriesAcrossAReopen) {
  FakeClock clock;
  const std::string path = ::testing::TempDir() + "/access_teams_" + std::to_string(::getpid());
  std::remove(path.c_str());
  std::string token;
  {
    auto store = open_store(path, clock);
    auto made = store->create_token("alice", Role::user, "ada", {"vision", "nlp"});
    ASSERT_TRUE(made.ok()) << made.error().message;
    token = *made;
    EXPECT_EQ(store->identify(token)->teams, (std::vector<std::string>{"vision", "nlp"}));
    EXPECT_EQ(store->create_token("bob", Role::user, "ada", {"no team"}).error().kind,
              ErrorKind::invalid);
  }
  auto again = open_store(path, clock);
  EXPECT_EQ(again->identify(token)->teams, (std::vector<std::string>{"vision", "nlp"}));
  EXPECT_EQ(again->tokens()->at(0).teams, (std::vector<std::string>{"vision", "nlp"}));
  std::remove(path.c_str());
}

TEST(AccessStore, WhatMustHoldATokenRunsBeforeItWorksAndItsFailureKeepsItDead) {
  FakeClock clock;
  auto store = open_store(":memory:", clock);
  std::string held;
  auto made = store->create_token("admin", Role::admin, "orchestrate serve", {},
                                  [&](const std::string& token) -> Result<void> {
                                    EXPECT_FALSE(store->identify(token)) << "not live yet";
                                    held = token;
                                    return {};
                                  });
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(held, *made);
  EXPECT_TRUE(store->identify(held));
  std::string refused;
  auto failed = store->create_token("admin-2", Role::admin, "orchestrate serve", {},
                                    [&](const std::string& token) -> Result<void> {
                                      refused = token;
                                      return make_error(ErrorKind::io, "disk full");
                                    });
  ASSERT_FALSE(failed.ok());
  EXPECT_FALSE(store->identify(refused));
  EXPECT_EQ(store->tokens()->size(), 1u);
}

TEST(AccessStore, TheAuditPagesNewestFirst) {
  FakeClock clock;
  auto store = open_store(":memory:", clock);
  for (int i = 0; i < 5; ++i) {
    AuditRow row;
    row.user = "u" + std::to_string(i);
    row.method = "POST";
    row.status = 200;
    row.result = "ok";
    ASSERT_TRUE(store->record(row).ok());
    clock.advance_ms(10);
  }
  auto page = store->audit(2, std::nullopt);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 2u);
  EXPECT_EQ(page->rows[0].user, "u4");
  EXPECT_EQ(page->rows[1].user, "u3");
  ASSERT_TRUE(page->next);
  auto rest = store->audit(10, page->next);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->rows.size(), 3u);
  EXPECT_EQ(rest->rows[0].user, "u2");
  EXPECT_FALSE(rest->next);
}

TEST(Roles, EachRoleMayDoWhatTheOnesBeforeItMay) {
  EXPECT_TRUE(role_allows(Role::admin, Role::operator_));
  EXPECT_TRUE(role_allows(Role::user, Role::user));
  EXPECT_FALSE(role_allows(Role::user, Role::operator_));
  EXPECT_FALSE(role_allows(Role::viewer, Role::user));
  EXPECT_EQ(parse_role("operator"), Role::operator_);
  EXPECT_FALSE(parse_role("open"));
  EXPECT_FALSE(parse_role("root"));
}

}  // namespace
}  // namespace orch::testing
