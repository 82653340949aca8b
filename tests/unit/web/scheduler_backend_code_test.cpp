// A submitted `workdir:` (issue 40) bound by the real backend to the archive the request names,
// only when the submitter uploaded it; the stored spec keeps the hash and the size.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/harness/builders.h"
#include "tests/unit/web/backend_fixture.h"
#include "web/backend/scheduler_backend.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

const std::string kHash(64, 'c');

class UploadedArchives final : public CodeApi {
 public:
  Result<nlohmann::json> find_code(const std::string& sha256, const std::string& user) override {
    if (!by[sha256].count(user)) return make_error(ErrorKind::not_found, "none");
    return nlohmann::json{{"sha256", sha256}, {"bytes", 10240}};
  }
  Result<nlohmann::json> put_code(const std::string&, const std::string&,
                                  const std::string&) override {
    return make_error(ErrorKind::unsupported, "not here");
  }
  std::map<std::string, std::set<std::string>> by;
};

class SchedulerBackendCodeTest : public BackendFixture {
 protected:
  void SetUp() override {
    open({testing::make_cluster("alpha")});
    code_.by[kHash] = {"ada"};
    backend_->set_code(&code_);
    loop_->start();
  }
  void TearDown() override { loop_->stop(); }
  Result<nlohmann::json> submit(const std::string& extra, const std::string& user,
                                const std::string& hash) {
    Submitter who{user, true, {}};
    who.workdir_sha256 = hash;
    return backend_->submit_job("name: a\ncommand: python -m pkg.train\n" + extra, "job.yaml", who);
  }
  UploadedArchives code_;
};

TEST_F(SchedulerBackendCodeTest, TheUploadersArchiveIsBoundToTheSpec) {
  auto r = submit("workdir: ./src\n", "ada", kHash);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto job = backend_->get_job((*r)["id"].get<std::int64_t>());
  ASSERT_TRUE(job.ok());
  const nlohmann::json spec = nlohmann::json::parse(job->text)["spec"];
  EXPECT_EQ(spec["workdir"]["sha256"], kHash);
  EXPECT_EQ(spec["workdir"]["bytes"], 10240);
  EXPECT_EQ(spec["workdir"]["source"], "./src");
}

TEST_F(SchedulerBackendCodeTest, AWorkdirWithoutAnUploadedArchiveSaysHowToUploadOne) {
  auto r = submit("workdir: ./src\n", "ada", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, HasSubstr("job.yaml:3:"));
  EXPECT_THAT(r.error().message, HasSubstr("orchestrate job submit"));
  EXPECT_THAT(r.error().message, HasSubstr("PUT /api/v1/code/{sha256}"));
}

TEST_F(SchedulerBackendCodeTest, AnotherUsersArchiveIsRefusedEvenByItsHash) {
  auto r = submit("workdir: ./src\n", "bob", kHash);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("was not uploaded by bob"));
  // A hash written into the document is not a claim either: the request's is the one checked.
  auto forged = submit("workdir: {source: ., sha256: " + kHash + "}\n", "bob", "");
  ASSERT_FALSE(forged.ok());
  EXPECT_THAT(forged.error().message, HasSubstr("names no uploaded archive"));
}

TEST_F(SchedulerBackendCodeTest, AnArchiveNamedForASpecWithoutWorkdirIsRefused) {
  auto r = submit("", "ada", kHash);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("the spec has no \"workdir\""));
  EXPECT_TRUE(submit("", "ada", "").ok());
}

}  // namespace
}  // namespace orch
