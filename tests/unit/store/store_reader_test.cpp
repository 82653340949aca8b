// The read side of the state database (scheduler/store/store_reader.h): a StoreReader sees what
// the writer committed, SQLite itself refuses a write on its connection, and a database the
// writer has not migrated is refused with a message that says what to do.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"
#include "scheduler/store/store_reader.h"
#include "tests/harness/builders.h"

namespace orch {
namespace {

// The reader's connection, which no caller outside scheduler/store can reach: taken here through
// a pointer to the protected member, to prove that SQLite (not only the type) refuses writes.
struct ConnectionOf : StoreReader {
  static Db& of(StoreReader& reader) { return *(reader.*(&ConnectionOf::conn_)); }
};

class StoreReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("orch-store-reader-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "state.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(StoreReaderTest, SeesWhatTheWriterCommitted) {
  auto writer = std::move(Store::open(path_).value());
  auto reader = std::move(StoreReader::open(path_).value());
  ASSERT_TRUE(writer
                  ->transaction([&]() -> Result<void> {
                    JobRow job;
                    job.name = "seen";
                    job.spec = orch::testing::make_job();
                    job.created_ms = job.updated_ms = 1000;
                    auto id = writer->insert_job(job);
                    if (!id) return id.error();
                    return Ok{};
                  })
                  .ok());

  auto jobs = reader->jobs(std::nullopt, 10);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].name, "seen");
}

TEST_F(StoreReaderTest, ItsConnectionRefusesEveryWrite) {
  auto writer = std::move(Store::open(path_).value());
  auto reader = std::move(StoreReader::open(path_).value());

  auto wrote = ConnectionOf::of(*reader).exec(
      "INSERT INTO events(job_id, attempt_no, at_ms, kind, message) "
      "VALUES (NULL, NULL, 0, 'planted', 'a write through a reader')");
  ASSERT_FALSE(wrote.ok());
  EXPECT_NE(wrote.error().message.find("readonly"), std::string::npos) << wrote.error().message;
}

TEST_F(StoreReaderTest, ADatabaseTheWriterHasNotMigratedIsRefused) {
  {
    auto bare = Db::open(path_);
    ASSERT_TRUE(bare.ok());
    ASSERT_TRUE(bare->exec("CREATE TABLE unrelated(x)").ok());
  }
  auto reader = StoreReader::open(path_);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.error().message.find("open it with the server"), std::string::npos)
      << reader.error().message;
  EXPECT_NE(reader.error().message.find(path_), std::string::npos) << reader.error().message;
}

}  // namespace
}  // namespace orch
