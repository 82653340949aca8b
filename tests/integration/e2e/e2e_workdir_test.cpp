// A job's workdir: sent with `orchestrate job submit` to a real server (issue 40): an unchanged
// tree is uploaded once however often it is submitted, a tree with one file changed sends its
// new archive once, the stored spec names the archive, and the server refuses a spec whose
// archive was never uploaded, another user's archive, and hostile archives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scheduler/common/ustar.h"
#include "tests/integration/e2e/e2e_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WorkdirE2eTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    project_ = dir_->path() + "/project";
    write_tree("pkg/__init__.py", "");
    write_tree("pkg/train.py", "print('step 1')\n");
    write_tree(".gitignore", "*.ckpt\n");
    write_tree("old.ckpt", std::string(4096, 'c'));
    spec_ = project_ + "/job.yaml";
    write_file(spec_,
               "name: wd\ncommand: 'true'\nresources: {nodes: 1, gpus_per_node: 1}\n"
               "workdir: .\n");
  }
  void write_tree(const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(project_ + "/" + rel).parent_path());
    std::ofstream(project_ + "/" + rel, std::ios::binary) << text;
  }
  // The archives the server keeps: <state>/code/*.tar.
  int archives() const {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(state_ + "/code", ec)) {
      n += e.path().extension() == ".tar";
    }
    return n;
  }
  // The id `job submit` printed: its last line (what it said of the workdir comes before).
  static std::int64_t submitted_id(const ProcessResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string last;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) last = line;
    }
    return std::atoll(last.c_str());
  }

  std::string project_;
  std::string spec_;
};

TEST_F(WorkdirE2eTest, AnUnchangedTreeIsSentOnceAndAChangedOneOnceMore) {
  ProcessResult first = cli({"job", "submit", spec_});
  EXPECT_THAT(first.output, HasSubstr(": sent "));
  EXPECT_EQ(archives(), 1);
  const std::int64_t id = submitted_id(first);
  ASSERT_GT(id, 0) << first.output;
  const json spec = job(id)["spec"];
  const std::string sha = spec["workdir"]["sha256"].get<std::string>();
  EXPECT_EQ(sha.size(), 64u);
  EXPECT_TRUE(fs::exists(state_ + "/code/" + sha + ".tar"));
  EXPECT_EQ(spec["workdir"]["bytes"], fs::file_size(state_ + "/code/" + sha + ".tar"));

  ProcessResult again = cli({"job", "submit", spec_});
  EXPECT_THAT(again.output, HasSubstr("unchanged"));
  EXPECT_THAT(again.output, ::testing::Not(HasSubstr(": sent ")));
  EXPECT_EQ(archives(), 1);
  EXPECT_EQ(job(submitted_id(again))["spec"]["workdir"]["sha256"], sha);

  write_tree("pkg/train.py", "print('step 2')\n");
  ProcessResult changed = cli({"job", "submit", spec_});
  EXPECT_THAT(changed.output, HasSubstr(": sent "));
  EXPECT_EQ(archives(), 2);
  EXPECT_NE(job(submitted_id(changed))["spec"]["workdir"]["sha256"], sha);
  ProcessResult changed_again = cli({"job", "submit", spec_});
  EXPECT_THAT(changed_again.output, HasSubstr("unchanged"));
  EXPECT_EQ(archives(), 2);
  // The server's log has one line per upload: two.
  const std::string log = read_file(log_path(1));
  std::size_t uploads = 0;
  for (auto at = log.find("workdir archive "); at != std::string::npos;
       at = log.find("workdir archive ", at + 1)) {
    ++uploads;
  }
  EXPECT_EQ(uploads, 2u) << log;
}

// Issue 40's acceptance: a 200 MiB workdir is sent once; the same tree with one file changed
// sends only its new archive, once. (About 30 s on a loaded two-core machine in the Dev build.)
TEST_F(WorkdirE2eTest, A200MibTreeIsSentOnceAndOnceMoreWithOneFileChanged) {
  std::string chunk(100 << 20, '\0');
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>((i * 131) >> 7);
  for (int i = 0; i < 2; ++i) write_tree("data/shard-" + std::to_string(i) + ".bin", chunk);
  ProcessResult first = cli({"job", "submit", spec_});
  EXPECT_THAT(first.output, HasSubstr(": sent 200.0 MiB"));
  ProcessResult again = cli({"job", "submit", spec_});
  EXPECT_THAT(again.output, HasSubstr("unchanged"));
  write_tree("pkg/train.py", "print('changed')\n");
  ProcessResult changed = cli({"job", "submit", spec_});
  EXPECT_THAT(changed.output, HasSubstr(": sent 200.0 MiB"));
  ProcessResult changed_again = cli({"job", "submit", spec_});
  EXPECT_THAT(changed_again.output, HasSubstr("unchanged"));
  EXPECT_EQ(archives(), 2);
}

TEST_F(WorkdirE2eTest, ATreeOverTheLimitIsRefusedBeforeAnythingIsSent) {
  write_tree("weights.pt", std::string(8192, 'w'));
  ProcessResult r = cli({"job", "submit", "--workdir-limit", "4KiB", spec_});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("over the limit of 4.0 KiB; the largest: weights.pt (8.0 KiB)"));
  EXPECT_EQ(archives(), 0);
  EXPECT_EQ(get_json(url_, "/api/v1/jobs")["jobs"].size(), 0u);
  ProcessResult bad = cli({"job", "submit", "--workdir-limit", "lots", spec_});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("a size such as 512MiB"));
  EXPECT_EQ(cli({"job", "submit", "--workdir-limit", "1MiB", spec_}).exit_code, 0);
  EXPECT_EQ(archives(), 1);
}

TEST_F(WorkdirE2eTest, ASpecWithAWorkdirButNoUploadedArchiveIsRefusedSayingHowToSendIt) {
  HttpResponse r = call(url_, "POST", "/api/v1/jobs?source=job.yaml",
                        "name: wd\ncommand: 'true'\nworkdir: ./src\n", "application/yaml");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_THAT(r.body, HasSubstr("job.yaml:3:"));
  EXPECT_THAT(r.body, HasSubstr("orchestrate job submit"));
  EXPECT_THAT(r.body, HasSubstr("PUT /api/v1/code/{sha256}"));
}

TEST_F(WorkdirE2eTest, AnotherUsersArchiveCannotBeNamedAndHostileArchivesAreRefused) {
  ProcessResult first = cli({"job", "submit", spec_});
  const std::int64_t id = submitted_id(first);
  ASSERT_GT(id, 0);
  const std::string sha = job(id)["spec"]["workdir"]["sha256"].get<std::string>();
  HttpResponse made = call(url_, "POST", "/api/v1/tokens",
                           R"({"name": "mallory", "role": "user", "teams": ["x"]})");
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string mallory = json::parse(made.body)["token"].get<std::string>();
  HttpResponse seen = call_as(url_, mallory, "GET", "/api/v1/code/" + sha);
  EXPECT_EQ(seen.status, 404) << seen.body;
  HttpResponse used = call_as(url_, mallory, "POST", "/api/v1/jobs?workdir=sha256:" + sha,
                              "name: m\ncommand: 'true'\nworkdir: .\n", "application/yaml");
  EXPECT_EQ(used.status, 422) << used.body;
  EXPECT_THAT(used.body, HasSubstr("was not uploaded by mallory"));

  // "../evil" as a member: refused whatever its hash, and never kept.
  std::string evil = ustar::header({"../evil", ustar::Kind::file, 0644, 1, ""}).value();
  evil += std::string("x") + std::string(511, '\0') + ustar::end_of_archive();
  const std::string evil_sha = [&] {
    write_file(dir_->path() + "/evil.tar", evil);
    ProcessResult r = run_process({"/usr/bin/sha256sum", dir_->path() + "/evil.tar"},
                                  std::chrono::milliseconds(10000));
    return r.output.substr(0, 64);
  }();
  HttpResponse put =
      call_as(url_, mallory, "PUT", "/api/v1/code/" + evil_sha, evil, "application/x-tar");
  EXPECT_EQ(put.status, 422) << put.body;
  EXPECT_THAT(put.body, HasSubstr("\\\"../evil\\\""));
  HttpResponse wrong =
      call_as(url_, mallory, "PUT", "/api/v1/code/" + sha, evil, "application/x-tar");
  EXPECT_EQ(wrong.status, 422) << wrong.body;
  EXPECT_THAT(wrong.body, HasSubstr("SHA-256 is " + evil_sha));
  EXPECT_EQ(archives(), 1);
}

}  // namespace
}  // namespace orch::e2e
