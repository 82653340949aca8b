// first_invalid_utf8 and to_valid_utf8: every way RFC 3629 refuses a byte sequence, and the
// offset each is reported at.

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/common/utf8.h"

namespace orch {
namespace {

struct Case {
  const char* why;
  std::string text;
  std::optional<std::size_t> bad_at;
};

const Case kCases[] = {
    {"empty", "", std::nullopt},
    {"ascii", "python train.py --lr 3e-4", std::nullopt},
    {"two bytes", "caf\xC3\xA9", std::nullopt},
    {"three bytes", "\xE2\x82\xAC 5", std::nullopt},
    {"four bytes", "\xF0\x9F\x98\x80!", std::nullopt},
    {"U+D7FF, below the surrogates", "\xED\x9F\xBF", std::nullopt},
    {"U+E000, above the surrogates", "\xEE\x80\x80", std::nullopt},
    {"U+FFFF", "\xEF\xBF\xBF", std::nullopt},
    {"U+10FFFF, the last code point", "\xF4\x8F\xBF\xBF", std::nullopt},
    {"NUL is valid", std::string("a\0b", 3), std::nullopt},
    {"lone 0xFF", "abc\xFF", 3},
    {"lone continuation", "ab\x80", 2},
    {"continuation after a full sequence", "\xC3\xA9\xA9", 2},
    {"overlong two bytes (C0 80 for NUL)", "x\xC0\x80", 1},
    {"overlong two bytes (C1 BF)", "\xC1\xBF", 0},
    {"overlong three bytes (E0 80 AF for '/')", "a/\xE0\x80\xAF", 2},
    {"overlong three bytes (E0 9F BF)", "\xE0\x9F\xBF", 0},
    {"overlong four bytes (F0 8F BF BF)", "\xF0\x8F\xBF\xBF", 0},
    {"surrogate U+D800", "ok \xED\xA0\x80", 3},
    {"surrogate U+DFFF", "\xED\xBF\xBF", 0},
    {"CESU-8 surrogate pair", "\xED\xA0\xBD\xED\xB8\x80", 0},
    {"U+110000", "\xF4\x90\x80\x80", 0},
    {"F5 lead byte", "\xF5\x80\x80\x80", 0},
    {"five-byte form", "\xF8\x88\x80\x80\x80", 0},
    {"truncated two bytes at the end", "abc\xC3", 3},
    {"truncated three bytes at the end", "abc\xE2\x82", 3},
    {"truncated four bytes at the end", "\xF0\x9F\x98", 0},
    {"truncated sequence before ascii", "\xE2\x82x", 0},
    {"bad byte after valid multibyte text", "\xC3\xA9t\xC3\xA9 \xFE", 6},
};

class Utf8 : public ::testing::TestWithParam<Case> {};

TEST_P(Utf8, FirstInvalidByte) {
  const Case& c = GetParam();
  EXPECT_EQ(first_invalid_utf8(c.text), c.bad_at) << c.why;
  const std::string repaired = to_valid_utf8(c.text);
  EXPECT_EQ(first_invalid_utf8(repaired), std::nullopt) << c.why;
  if (!c.bad_at) {
    EXPECT_EQ(repaired, c.text) << c.why;
  } else {
    EXPECT_NE(repaired.find("\xEF\xBF\xBD"), std::string::npos) << c.why;
  }
  // The property that matters: what the check accepts, JSON can always write.
  if (!c.bad_at) {
    EXPECT_NO_THROW((void)nlohmann::json(c.text).dump()) << c.why;
  }
  EXPECT_NO_THROW((void)nlohmann::json(repaired).dump()) << c.why;
}

INSTANTIATE_TEST_SUITE_P(Table, Utf8, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.why;
                           for (char& ch : name) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

TEST(Utf8, AgreesWithJsonOnEveryTwoByteString) {
  // Exhaustive over two bytes: nlohmann's dump refuses exactly what the check refuses.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string s{static_cast<char>(a), static_cast<char>(b)};
      bool json_ok = true;
      try {
        (void)nlohmann::json(s).dump();
      } catch (const nlohmann::json::exception&) {
        json_ok = false;
      }
      ASSERT_EQ(!first_invalid_utf8(s).has_value(), json_ok) << a << " " << b;
    }
  }
}

TEST(Utf8, ReplacesEachBadByteOnce) {
  EXPECT_EQ(to_valid_utf8("a\xFF\xFE"
                          "b"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");
}

TEST(ShownWords, ControlCharactersAndBidiOverridesBecomeOneBlankBetweenWords) {
  EXPECT_EQ(shown_words("  Kueue:\tno\r\n\x1b[31mquota\x7f  ", 512), "Kueue: no [31mquota");
  EXPECT_EQ(shown_words("a\xC2\x85"
                        "b",
                        512),
            "a b");  // U+0085, a C1 control
  EXPECT_EQ(shown_words("evil\xE2\x80\xAEtxt.exe \xE2\x81\xA6x", 512), "evil txt.exe x");
  EXPECT_EQ(shown_words(std::string("a\0b", 3), 512), "a b");
}

TEST(ShownWords, BadBytesAreReplacedAndGoodOnesKept) {
  EXPECT_EQ(shown_words("caf\xC3\xA9 \xFF", 512), "caf\xC3\xA9 \xEF\xBF\xBD");
}

TEST(ShownWords, LongWordsAreCutAtACharacterStartAndEndWithAnEllipsis) {
  const std::string long_words(2000, 'x');
  const std::string shown = shown_words(long_words, 512);
  EXPECT_EQ(shown.size(), 512u);
  EXPECT_EQ(shown.substr(509), "...");
  // A two-byte character cut in half is left out whole.
  const std::string cut = shown_words("ab\xC3\xA9\xC3\xA9\xC3\xA9", 7);
  EXPECT_EQ(cut, "ab\xC3\xA9...");
  EXPECT_FALSE(first_invalid_utf8(cut).has_value());
  EXPECT_EQ(shown_words("short", 5), "short");
}

}  // namespace
}  // namespace orch
