// The agent's reading of /etc/passwd and /etc/group (agents/user_db.h) on fixed texts.

#include <gtest/gtest.h>

#include "agents/user_db.h"

namespace orch::agent {
namespace {

const char* kPasswd =
    "root:x:0:0:root:/root:/bin/bash\n"
    "# a comment line\n"
    "\n"
    "broken line without fields\n"
    "bad:x:notanumber:1:Bad:/bad:/bin/sh\n"
    "orchestrate-job:x:999:995::/nonexistent:/usr/sbin/nologin\r\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin";  // no final newline

TEST(UserDb, FindsAUserByName) {
  auto u = find_user(kPasswd, "orchestrate-job");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->uid, 999u);
  EXPECT_EQ(u->gid, 995u);
  EXPECT_EQ(u->home, "/nonexistent");
  auto last = find_user(kPasswd, "nobody");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->uid, 65534u);
}

TEST(UserDb, MissingAndMalformedEntriesAreNotFound) {
  EXPECT_FALSE(find_user(kPasswd, "alice").has_value());
  EXPECT_FALSE(find_user(kPasswd, "bad").has_value());
  EXPECT_FALSE(find_user(kPasswd, "broken line without fields").has_value());
  EXPECT_FALSE(find_user(kPasswd, "").has_value());
  EXPECT_FALSE(find_user(kPasswd, "orchestrate").has_value());  // whole names only
}

TEST(UserDb, GroupsArePrimaryFirstThenEachMembershipOnce) {
  const char* group =
      "root:x:0:\n"
      "video:x:44:alice,orchestrate-job\n"
      "audio:x:29:orchestrate-jobx\n"
      "job:x:995:\n"
      "render:x:105:orchestrate-job\n"
      "again:x:995:orchestrate-job\n"
      "bad:x:zz:orchestrate-job\n";
  EXPECT_EQ(groups_of(group, "orchestrate-job", 995), (std::vector<gid_t>{995, 44, 105}));
  EXPECT_EQ(groups_of("", "orchestrate-job", 995), (std::vector<gid_t>{995}));
}

}  // namespace
}  // namespace orch::agent
