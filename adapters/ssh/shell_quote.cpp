#include "adapters/ssh/shell_quote.h"

namespace orch {

Result<std::string> shell_quote(std::string_view value) {
  if (value.find('\0') != std::string_view::npos) {
    return make_error(ErrorKind::invalid,
                      "a value for a shell command contains a NUL byte, which no command line "
                      "can carry; remove it");
  }
  std::string out;
  out.reserve(value.size() + 2);
  out += '\'';
  for (char c : value) {
    if (c == '\'') {
      out += "'\\''";  // close the quote, an escaped quote, reopen
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

Result<std::string> shell_command(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) {
    auto quoted = shell_quote(word);
    if (!quoted) return quoted.error();
    if (!line.empty()) line += ' ';
    line += *quoted;
  }
  return line;
}

}  // namespace orch
