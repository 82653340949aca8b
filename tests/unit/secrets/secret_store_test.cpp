// SecretStore: secrets.db keeps values (any byte but NUL), grants and who set them, owner-only.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "scheduler/secrets/secret_store.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

TEST(SecretStoreTest, ASecretKeepsItsValueGrantsAndAuthorAcrossAReopen) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("secret_store_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "secrets.db").string();
  FakeClock clock(1000);
  const std::string binary("\xff\x01 value\n\x80", 10);
  {
    auto store = SecretStore::open(path, clock);
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE((*store)->put("hf", binary, {"nlp", "vision"}, "ada").ok());
    clock.advance_ms(500);
    auto regranted = (*store)->regrant("hf", {"nlp"}, "olga");
    ASSERT_TRUE(regranted.ok());
    EXPECT_EQ(regranted->created_ms, 1000);
    EXPECT_EQ(regranted->updated_ms, 1500);
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = SecretStore::open(path, clock);
  ASSERT_TRUE(again.ok());
  auto hf = (*again)->find("hf");
  ASSERT_TRUE(hf.has_value());
  EXPECT_EQ(hf->value, binary);
  EXPECT_EQ(hf->teams, (std::vector<std::string>{"nlp"}));
  EXPECT_EQ(hf->created_by, "ada");
  EXPECT_EQ(hf->updated_by, "olga");
  ASSERT_TRUE((*again)->remove("hf").ok());
  EXPECT_FALSE((*again)->find("hf").has_value());
  EXPECT_EQ((*again)->remove("hf").error().kind, ErrorKind::not_found);
  EXPECT_EQ((*again)->regrant("hf", {}, "x").error().kind, ErrorKind::not_found);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orch
