// The agent's hand-written JSON: escaping, invalid UTF-8, numbers, and that a strict parser
// (nlohmann) reads back exactly what was written.

#include "agents/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace orch::agent {
namespace {

TEST(JsonWriter, QuotesAndEscapes) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_quote("l1\nl2\r\t"), "\"l1\\nl2\\r\\t\"");
  EXPECT_EQ(json_quote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json_quote(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
}

TEST(JsonWriter, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(json_quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // A lone continuation byte, a truncated sequence, an overlong '/', a UTF-16 surrogate.
  EXPECT_EQ(json_quote("a\x80z"), "\"a\\ufffdz\"");
  EXPECT_EQ(json_quote("a\xe2\x82"), "\"a\\ufffd\\ufffd\"");
  EXPECT_EQ(json_quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(json_quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
}

TEST(JsonWriter, EveryByteStringRoundTripsThroughAStrictParser) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  JsonWriter w;
  w.begin_object();
  w.member("s", all);
  w.end_object();
  auto j = nlohmann::json::parse(w.str());  // throws on anything invalid
  std::string back = j["s"];
  EXPECT_EQ(back.substr(0, 128), all.substr(0, 128));  // ASCII comes back unchanged
}

TEST(JsonWriter, BuildsNestedObjectsWithCommas) {
  JsonWriter w;
  w.begin_object();
  w.member("a", 1);
  w.member("b", "x");
  w.key("list");
  w.begin_array();
  w.number(std::int64_t{1});
  w.begin_object();
  w.member_bool("ok", true);
  w.end_object();
  w.string("s");
  w.end_array();
  w.optional_member("absent", std::optional<double>{});
  w.optional_member("present", std::optional<std::int64_t>{7});
  w.optional_member("flag", std::optional<bool>{false});
  w.key("nothing");
  w.null();
  w.end_object();
  EXPECT_EQ(
      w.str(),
      R"({"a":1,"b":"x","list":[1,{"ok":true},"s"],"present":7,"flag":false,"nothing":null})");
}

TEST(JsonWriter, NumbersDropTrailingZerosAndNonFiniteIsNull) {
  JsonWriter w;
  w.begin_array();
  w.number(12.5);
  w.number(2.0);
  w.number(0.12345, 3);
  w.number(-0.0001, 2);
  w.number(std::nan(""));
  w.number(INFINITY);
  w.number(std::int64_t{1700000000123});
  w.end_array();
  EXPECT_EQ(w.str(), "[12.5,2,0.123,0,null,null,1700000000123]");
  JsonWriter o;
  o.begin_object();
  o.optional_member("nan", std::optional<double>{std::nan("")});
  o.end_object();
  EXPECT_EQ(o.str(), "{}");
}

}  // namespace
}  // namespace orch::agent
