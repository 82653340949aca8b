#include "source_tokens.h"

#include <cctype>

namespace layering {

namespace {

// Reads the source once, front to back, emitting what is code.
class Lexer {
 public:
  explicit Lexer(const std::string& src) : s_(src) {}

  SourceTokens run() {
    while (i_ < s_.size()) step();
    return std::move(out_);
  }

 private:
  char at(size_t k) const { return k < s_.size() ? s_[k] : '\0'; }
  bool ident_char(char c) const { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  void emit(std::string text, int line) { out_.tokens.push_back({std::move(text), line}); }

  // Moves to `to`, counting the newlines passed.
  void advance_to(size_t to) {
    for (; i_ < to && i_ < s_.size(); ++i_) {
      if (s_[i_] == '\n') {
        ++line_;
        line_start_ = true;
      }
    }
  }

  void step() {
    const char c = s_[i_];
    if (std::isspace(static_cast<unsigned char>(c))) return advance_to(i_ + 1);
    const bool first_on_line = line_start_;
    line_start_ = false;
    if (c == '#' && first_on_line) return skip_directive();
    if (c == '/' && at(i_ + 1) == '/') return line_comment(first_on_line);
    if (c == '/' && at(i_ + 1) == '*') {
      const size_t end = s_.find("*/", i_ + 2);
      return advance_to(end == std::string::npos ? s_.size() : end + 2);
    }
    if (c == '"' || c == '\'') return quoted(c);
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && std::isdigit(static_cast<unsigned char>(at(i_ + 1))))) {
      return number();
    }
    if (ident_char(c)) return identifier();
    punctuation();
  }

  // A # line up to its end, with its backslash continuations.
  void skip_directive() {
    size_t k = i_;
    while (k < s_.size() && !(s_[k] == '\n' && s_[k - 1] != '\\')) ++k;
    advance_to(k);
  }

  void line_comment(bool first_on_line) {
    size_t end = s_.find('\n', i_);
    if (end == std::string::npos) end = s_.size();
    if (first_on_line && s_.compare(i_, kTableMarker.size(), kTableMarker) == 0) {
      out_.marker_lines.insert(line_);
    }
    advance_to(end);
  }

  // A string or character literal; a backslash escapes the next character.
  void quoted(char quote) {
    const int line = line_;
    size_t k = i_ + 1;
    while (k < s_.size() && s_[k] != quote && s_[k] != '\n') k += s_[k] == '\\' ? 2 : 1;
    advance_to(k + 1);
    emit(std::string(2, quote), line);
  }

  // R"delim( ... )delim", after its prefix (R, u8R, uR, UR, LR).
  void raw_string() {
    const int line = line_;
    const size_t open = s_.find('(', i_);
    const std::string close = ")" + s_.substr(i_ + 1, open - i_ - 1) + "\"";
    const size_t end = s_.find(close, open);
    advance_to(end == std::string::npos ? s_.size() : end + close.size());
    emit("\"\"", line);
  }

  // Digits, with ' separators, exponents and suffixes: 1'000, 0x1F, 1.5e-3f.
  void number() {
    size_t k = i_;
    while (k < s_.size()) {
      const char c = s_[k];
      const char prev = k > i_ ? s_[k - 1] : '\0';
      const bool sign =
          (c == '+' || c == '-') && std::string("eEpP").find(prev) != std::string::npos;
      const bool separator = c == '\'' && ident_char(at(k + 1));
      if (!ident_char(c) && c != '.' && !sign && !separator) break;
      ++k;
    }
    emit(s_.substr(i_, k - i_), line_);
    advance_to(k);
  }

  void identifier() {
    size_t k = i_;
    while (k < s_.size() && ident_char(s_[k])) ++k;
    const std::string word = s_.substr(i_, k - i_);
    static const std::set<std::string> raw_prefixes = {"R", "u8R", "uR", "UR", "LR"};
    if (at(k) == '"' && raw_prefixes.contains(word)) {
      i_ = k;
      return raw_string();
    }
    emit(word, line_);
    advance_to(k);
  }

  // Two-character operators that hold an '=' or must not be read as two tokens; everything
  // else (including < and >, kept single for template angle counting) is one character.
  void punctuation() {
    static const std::set<std::string> pairs = {"::", "->", "==", "!=", "<=", ">=", "&&", "||",
                                                "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="};
    const std::string two = s_.substr(i_, 2);
    const size_t n = pairs.contains(two) ? 2 : 1;
    emit(s_.substr(i_, n), line_);
    advance_to(i_ + n);
  }

  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1;
  bool line_start_ = true;
  SourceTokens out_;
};

}  // namespace

SourceTokens tokenize(const std::string& source) {
  return Lexer(source).run();
}

}  // namespace layering
