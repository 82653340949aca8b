// The shared helpers: typo suggestions and how values are described in messages.

#include <gtest/gtest.h>

#include "scheduler/spec/yaml_reader.h"

namespace orch::yaml {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("nodes", "nodes"), 0u);
  EXPECT_EQ(edit_distance("gpu_per_node", "gpus_per_node"), 1u);
  EXPECT_EQ(edit_distance("nmae", "name"), 1u);  // adjacent swap is one edit
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Nearest, SuggestsOnlyCloseCandidates) {
  const std::vector<std::string_view> keys = {"nodes", "gpus_per_node"};
  EXPECT_EQ(nearest("gpu_per_node", keys), "gpus_per_node");
  EXPECT_EQ(nearest("node", keys), "nodes");
  EXPECT_EQ(nearest("priority", keys), std::nullopt);
  EXPECT_EQ(nearest("x", keys), std::nullopt);
}

TEST(Describe, NamesTheKindOfValue) {
  EXPECT_EQ(describe(YAML::Load("two")), "\"two\"");
  EXPECT_EQ(describe(YAML::Load("\"2\"")), "the string \"2\"");
  EXPECT_EQ(describe(YAML::Load("[1]")), "a list");
  EXPECT_EQ(describe(YAML::Load("{a: 1}")), "a map");
  EXPECT_EQ(describe(YAML::Load("~")), "null");
  EXPECT_EQ(describe(YAML::Load(std::string(100, 'x'))), "\"" + std::string(60, 'x') + "...\"");
}

TEST(Scalars, NumbersAreStrictAndFinite) {
  EXPECT_EQ(scalar_to_integer(YAML::Load("42")), 42);
  EXPECT_EQ(scalar_to_integer(YAML::Load("+7")), 7);
  EXPECT_EQ(scalar_to_integer(YAML::Load("-3")), -3);
  EXPECT_FALSE(scalar_to_integer(YAML::Load("4.0")));
  EXPECT_FALSE(scalar_to_integer(YAML::Load("0x10")));
  EXPECT_FALSE(scalar_to_integer(YAML::Load("'4'")));
  EXPECT_FALSE(scalar_to_integer(YAML::Load("")));
  EXPECT_EQ(scalar_to_number(YAML::Load("7.0e9")), 7.0e9);
  EXPECT_EQ(scalar_to_number(YAML::Load("3")), 3.0);
  EXPECT_FALSE(scalar_to_number(YAML::Load("nan")));
  EXPECT_FALSE(scalar_to_number(YAML::Load("inf")));
  EXPECT_FALSE(scalar_to_number(YAML::Load("1e400")));
  EXPECT_FALSE(scalar_to_number(YAML::Load("1,5")));
}

TEST(Names, FollowTheDocumentedPatterns) {
  EXPECT_TRUE(is_name("toy-gpt.v2_1"));
  EXPECT_FALSE(is_name(""));
  EXPECT_FALSE(is_name("a/b"));
  EXPECT_TRUE(is_name(std::string(64, 'a')));
  EXPECT_FALSE(is_name(std::string(65, 'a')));
  EXPECT_TRUE(is_env_var_name("_A1"));
  EXPECT_FALSE(is_env_var_name("1A"));
  EXPECT_FALSE(is_env_var_name("A-B"));
}

}  // namespace
}  // namespace orch::yaml
