// The words of a manifest action: each enum value has one word, and a word nothing knows is
// refused rather than read as a default.
#include <gtest/gtest.h>

#include "scheduler/model/manifest_action.h"

namespace orch {
namespace {

TEST(ManifestAction, PurposesAndHashModesReadBackAndUnknownWordsAreRefused) {
  for (auto p : {ManifestPurpose::register_copy, ManifestPurpose::verify, ManifestPurpose::audit}) {
    EXPECT_EQ(parse_manifest_purpose(to_string(p)), p);
  }
  EXPECT_EQ(to_string(ManifestPurpose::register_copy), "register");
  EXPECT_EQ(parse_manifest_purpose("reckon"), std::nullopt);
  EXPECT_EQ(parse_manifest_purpose(""), std::nullopt);
  using H = ManifestRequest::Hash;
  for (auto h : {H::all, H::none, H::listed}) EXPECT_EQ(parse_manifest_hash(to_string(h)), h);
  EXPECT_EQ(parse_manifest_hash("ALL"), std::nullopt);
}

}  // namespace
}  // namespace orch
