#pragma once
// Small text helpers the brain's files share: token suffixes and lists in messages.

#include <cstdint>
#include <string>
#include <vector>

namespace orch::brain_text {

// v in base 36 (digits, then lowercase letters): short, unique time suffixes for tokens.
inline std::string base36(std::uint64_t v) {
  const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string s;
  do {
    s.insert(s.begin(), digits[v % 36]);
    v /= 36;
  } while (v);
  return s;
}

}  // namespace orch::brain_text
