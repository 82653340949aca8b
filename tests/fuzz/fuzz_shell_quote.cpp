// shell_quote as a property: for any value without NUL, the quoted word is one POSIX
// single-quoted word that a shell reads back as exactly the value, and nothing in it is outside
// quotes except the backslash-escaped quotes of the '\'' form. (Running `sh -c printf` per input
// would be too slow to fuzz; unit/shell_quote does that on chosen values.) A value with NUL is
// refused, and shell_command joins such words with single spaces.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/ssh/shell_quote.h"

namespace {

[[noreturn]] void fail(const char* why, std::string_view quoted) {
  std::fprintf(stderr, "shell_quote: %s: [%.*s]\n", why, static_cast<int>(quoted.size()),
               quoted.data());
  std::abort();
}

// How a POSIX shell reads one word made only of '...' runs and \' escapes; nullopt for anything
// else (an unquoted byte, an unterminated quote): such a byte would be shell syntax.
std::optional<std::string> unquote_word(std::string_view word) {
  std::string out;
  std::size_t i = 0;
  while (i < word.size()) {
    if (word[i] == '\'') {
      const std::size_t end = word.find('\'', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      out.append(word.substr(i + 1, end - i - 1));
      i = end + 1;
    } else if (word[i] == '\\' && i + 1 < word.size() && word[i + 1] == '\'') {
      out += '\'';
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  auto quoted = orch::shell_quote(value);
  if (value.find('\0') != std::string_view::npos) {
    if (quoted) fail("a value with NUL was accepted", *quoted);
    return 0;
  }
  if (!quoted) fail("a value without NUL was refused", value);
  if (quoted->empty()) fail("an empty word disappears on a command line", *quoted);
  auto back = unquote_word(*quoted);
  if (!back) fail("not one single-quoted word", *quoted);
  if (*back != value) fail("reads back as another value", *quoted);

  // The same value twice as a command line: two words, one space between them.
  auto line = orch::shell_command({std::string(value), std::string(value)});
  if (!line || *line != *quoted + " " + *quoted) fail("shell_command joins differently", *quoted);
  return 0;
}
