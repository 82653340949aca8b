#include "scheduler/common/base64.h"

#include <array>
#include <cctype>

namespace orch {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string encode_base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  unsigned int bits = 0;
  int nbits = 0;
  for (char c : bytes) {
    bits = (bits << 8) | static_cast<unsigned char>(c);
    nbits += 8;
    while (nbits >= 6) {
      nbits -= 6;
      out.push_back(kAlphabet[(bits >> nbits) & 63U]);
    }
  }
  if (nbits > 0) out.push_back(kAlphabet[(bits << (6 - nbits)) & 63U]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

std::optional<std::string> decode_base64(std::string_view text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    value[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  }
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned int bits = 0;
  int nbits = 0;
  bool padding = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    if (padding) return std::nullopt;  // data after '='
    const int v = value[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<unsigned int>(v);
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xFFU));
    }
  }
  if (nbits >= 6) return std::nullopt;  // a dangling sextet cannot end valid base64
  return out;
}

}  // namespace orch
