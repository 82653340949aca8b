// SecretRegistry: a job gets a secret by name only when its team is granted; the clusters
// file's secrets are read from their sources, all or nothing, and cannot be changed by the API.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/secrets/secret_registry.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using Refs = std::map<std::string, std::string>;
namespace fs = std::filesystem;

class SecretRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SecretStore::open(":memory:", clock_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    registry_ = std::make_unique<SecretRegistry>(std::move(*store), clock_);
    ASSERT_TRUE(registry_->set("hf", "hf-value", {"nlp"}, "ada").ok());
    ASSERT_TRUE(registry_->set("wandb", "wandb-value", {}, "ada").ok());
  }
  FakeClock clock_{5000};
  std::unique_ptr<SecretRegistry> registry_;
};

TEST_F(SecretRegistryTest, AGrantedTeamGetsTheValuesByVariable) {
  auto values = registry_->resolve(Refs{{"HF_TOKEN", "hf"}, {"WANDB_API_KEY", "wandb"}}, "nlp");
  ASSERT_TRUE(values.ok()) << values.error().message;
  EXPECT_EQ(*values, (Refs{{"HF_TOKEN", "hf-value"}, {"WANDB_API_KEY", "wandb-value"}}));
}

TEST_F(SecretRegistryTest, ASecretWithoutTeamsServesEveryTeamAndJobsWithoutOne) {
  EXPECT_TRUE(registry_->check(Refs{{"K", "wandb"}}, "vision").ok());
  EXPECT_TRUE(registry_->check(Refs{{"K", "wandb"}}, "").ok());
}

TEST_F(SecretRegistryTest, AnotherTeamIsForbiddenAndToldWhoIsGrantedNeverTheValue) {
  auto r = registry_->resolve(Refs{{"HF_TOKEN", "hf"}}, "vision");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::forbidden);
  EXPECT_THAT(r.error().message, HasSubstr("not granted to team vision (it is granted to nlp)"));
  EXPECT_THAT(r.error().message, ::testing::Not(HasSubstr("hf-value")));
  EXPECT_EQ(registry_->check(Refs{{"HF_TOKEN", "hf"}}, "").error().kind, ErrorKind::forbidden);
}

TEST_F(SecretRegistryTest, AnUnknownNameAndARetiredReferenceAreRefused) {
  auto unknown = registry_->check(Refs{{"K", "nope"}}, "nlp");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("names secret \"nope\", which does not exist"));
  auto retired = registry_->resolve(Refs{{"K", ""}}, "nlp");
  ASSERT_FALSE(retired.ok());
  EXPECT_THAT(retired.error().message, HasSubstr("names a file or variable of the server"));
}

TEST_F(SecretRegistryTest, AGrantTakenBackStopsTheNextResolve) {
  ASSERT_TRUE(registry_->grant("hf", {"vision"}, "ada").ok());
  EXPECT_EQ(registry_->resolve(Refs{{"K", "hf"}}, "nlp").error().kind, ErrorKind::forbidden);
  ASSERT_TRUE(registry_->remove("hf").ok());
  EXPECT_FALSE(registry_->resolve(Refs{{"K", "hf"}}, "vision").ok());
}

TEST_F(SecretRegistryTest, BadNamesTeamsAndValuesAreRefused) {
  EXPECT_EQ(registry_->set("a/b", "v", {}, "ada").error().kind, ErrorKind::invalid);
  EXPECT_EQ(registry_->set("ok", "v", {"no team"}, "ada").error().kind, ErrorKind::invalid);
  EXPECT_EQ(registry_->set("ok", std::string("a\0b", 3), {}, "ada").error().kind,
            ErrorKind::invalid);
}

TEST_F(SecretRegistryTest, TheListShowsNamesGrantsAndAgesNeverValues) {
  ASSERT_TRUE(registry_->configure({ConfiguredSecret{"pager", {"", "PATH"}, {"ops"}}}).ok());
  const auto list = registry_->list();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "hf");
  EXPECT_EQ(list[0].source, "api");
  EXPECT_EQ(list[0].updated_by, "ada");
  EXPECT_EQ(list[0].created_ms, 5000);
  EXPECT_EQ(list[1].name, "pager");
  EXPECT_EQ(list[1].source, "clusters file");
  EXPECT_EQ(list[1].teams, (std::vector<std::string>{"ops"}));
}

class ConfiguredSecretsTest : public SecretRegistryTest {
 protected:
  void SetUp() override {
    SecretRegistryTest::SetUp();
    dir_ = fs::path(::testing::TempDir()) / ("registry_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "pager.key") << "pager-value\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ConfiguredSecretsTest, AConfiguredFileIsReadAndTheApiCannotChangeIt) {
  ASSERT_TRUE(
      registry_->configure({ConfiguredSecret{"pager", {(dir_ / "pager.key").string(), ""}, {}}})
          .ok());
  auto v = registry_->resolve(Refs{{"P", "pager"}}, "any");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->at("P"), "pager-value");
  EXPECT_EQ(registry_->set("pager", "x", {}, "ada").error().kind, ErrorKind::conflict);
  EXPECT_EQ(registry_->remove("pager").error().kind, ErrorKind::conflict);
}

TEST_F(ConfiguredSecretsTest, AFifoOrDirectorySourceFailsTheWholeConfigurationAtOnce) {
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_TRUE(
      registry_->configure({ConfiguredSecret{"pager", {(dir_ / "pager.key").string(), ""}, {}}})
          .ok());
  for (const std::string& bad : {fifo, dir_.string()}) {
    auto r =
        registry_->configure({ConfiguredSecret{"pager", {(dir_ / "pager.key").string(), ""}, {}},
                              ConfiguredSecret{"bad", {bad, ""}, {}}});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.error().message, HasSubstr("secret bad: " + bad + " is a"));
    // All or nothing: the earlier configuration stands.
    EXPECT_TRUE(registry_->check(Refs{{"P", "pager"}}, "").ok());
    EXPECT_FALSE(registry_->check(Refs{{"B", "bad"}}, "").ok());
  }
}

}  // namespace
}  // namespace orch
