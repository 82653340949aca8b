#pragma once
// C++ source as tokens, for the function-length check (README.md here): comments, preprocessor
// lines, and the insides of string and character literals (raw strings too) are left out, so
// that a brace in them is never taken for code.
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace layering {

// The comment line that declares the function below it a table (README.md here).
inline constexpr std::string_view kTableMarker = "// function-length: table";

struct Token {
  std::string text;  // a string literal is "\"\"", a character literal "''"
  int line;          // from 1
};

struct SourceTokens {
  std::vector<Token> tokens;
  std::set<int> marker_lines;  // lines that start with kTableMarker (after blanks)
};

SourceTokens tokenize(const std::string& source);

}  // namespace layering
