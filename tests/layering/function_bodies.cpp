#include "function_bodies.h"

#include <cctype>
#include <set>

namespace layering {

namespace {

// One entry of a declaration: a single token, or a bracketed group from its opening token
// (`(`, `[`, `{`, or `template` for a template parameter list) to its closing one.
struct Entry {
  size_t first;
  size_t last;
};

// Finds the function bodies at namespace and class scope of one file's tokens.
class Scanner {
 public:
  explicit Scanner(const std::vector<Token>& tokens) : t_(tokens) {}

  std::vector<FunctionBody> run() {
    while (i_ < t_.size()) {
      scope();
      ++i_;  // an unbalanced '}' at file scope
    }
    return std::move(found_);
  }

 private:
  enum class Brace { function, scope, initializer };

  const std::string& text(size_t k) const { return t_[k].text; }
  bool is(const Entry& e, const char* s) const { return e.first == e.last && text(e.first) == s; }
  bool is_group(const Entry& e, const char* open) const {
    return e.first != e.last && text(e.first) == open;
  }
  static bool is_ident(const std::string& s) {
    return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  }

  // The index of the bracket that closes the one at `open`; all three kinds nest together.
  size_t match(size_t open) const {
    int depth = 0;
    for (size_t k = open; k < t_.size(); ++k) {
      const std::string& s = text(k);
      if (s == "(" || s == "[" || s == "{") ++depth;
      if ((s == ")" || s == "]" || s == "}") && --depth == 0) return k;
    }
    return t_.size() - 1;
  }

  // `template <...>`: the index of its closing '>', skipping bracketed groups inside.
  size_t template_end(size_t at) const {
    int depth = 0;
    for (size_t k = at; k < t_.size(); ++k) {
      const std::string& s = text(k);
      if (s == "(" || s == "[" || s == "{") k = match(k);
      if (s == "<") ++depth;
      if (s == ">" && --depth == 0) return k;
    }
    return t_.size() - 1;
  }

  // Reads declarations up to the scope's closing '}' (left at i_) or the end of the file.
  void scope() {
    std::vector<Entry> decl;
    while (i_ < t_.size() && text(i_) != "}") {
      const std::string& s = text(i_);
      const bool access = decl.size() == 1 && (is(decl[0], "public") || is(decl[0], "private") ||
                                               is(decl[0], "protected"));
      if (s == ";" || (s == ":" && access)) {
        decl.clear();
      } else if (s == "(" || s == "[") {
        decl.push_back({i_, match(i_)});
        i_ = decl.back().last;
      } else if (s == "template" && i_ + 1 < t_.size() && text(i_ + 1) == "<") {
        decl.push_back({i_, template_end(i_ + 1)});
        i_ = decl.back().last;
      } else if (s == "{") {
        brace(decl);
      } else {
        decl.push_back({i_, i_});
      }
      ++i_;
    }
  }

  // At a '{' (i_) that ends `decl`: records a function body, enters a scope, or passes over an
  // initializer; i_ is left on the closing '}'.
  void brace(std::vector<Entry>& decl) {
    size_t params = 0;
    const Brace kind = classify(decl, params);
    if (kind == Brace::scope) {
      ++i_;
      scope();
      decl.clear();
      return;
    }
    const size_t close = match(i_);
    if (kind == Brace::function) {
      found_.push_back({name_before(decl, params), t_[decl[params].first].line,
                        t_[decl.front().first].line, t_[close].line - t_[i_].line + 1});
      decl.clear();
    } else {
      decl.push_back({i_, close});
    }
    i_ = close;
  }

  Brace classify(const std::vector<Entry>& decl, size_t& params) const {
    for (size_t k = 0; k < decl.size(); ++k) {
      const bool after_operator = k > 0 && is(decl[k - 1], "operator");
      if (is(decl[k], "=") && !after_operator) return Brace::initializer;
      if (is(decl[k], "enum")) return Brace::initializer;
      if (is(decl[k], "namespace")) return Brace::scope;
    }
    for (size_t k = 1; k < decl.size(); ++k) {
      if (is_group(decl[k], "(") && opens_body(decl, k + 1)) {
        params = k;
        return Brace::function;
      }
    }
    for (const Entry& e : decl) {
      if (is(e, "class") || is(e, "struct") || is(e, "union") || is(e, "extern")) {
        return Brace::scope;
      }
    }
    return Brace::initializer;
  }

  // Whether the entries from `k` to the declaration's end may sit between a parameter list and
  // a function body (the '{' at i_).
  bool opens_body(const std::vector<Entry>& decl, size_t k) const {
    static const std::set<std::string> qualifiers = {"const", "volatile", "noexcept", "override",
                                                     "final", "&",        "&&",       "throw"};
    for (; k < decl.size(); ++k) {
      const Entry& e = decl[k];
      if (is(e, "->") || is(e, "requires")) return true;
      if (is(e, ":")) {  // a constructor's initializer list: the body follows `)` or `}`
        return is_group(decl.back(), "(") || is_group(decl.back(), "{");
      }
      if (e.first == e.last && qualifiers.contains(text(e.first))) continue;
      const bool qualifier_args =
          k > 0 && (is(decl[k - 1], "noexcept") || is(decl[k - 1], "throw"));
      if ((is_group(e, "(") && qualifier_args) || is_group(e, "[")) continue;  // [[attributes]]
      return false;
    }
    return true;
  }

  // The name in front of the parameter list decl[params]: `Placer::try_place`, `~Brain`,
  // `operator==`, `operator()`.
  std::string name_before(const std::vector<Entry>& decl, size_t params) const {
    for (size_t k = params; k-- > 0 && k + 4 > params;) {
      if (!is(decl[k], "operator")) continue;
      std::string name = "operator";
      for (size_t j = k + 1; j < params; ++j) {
        for (size_t x = decl[j].first; x <= decl[j].last; ++x) {
          const bool word = is_ident(text(x)) && is_ident(name.substr(name.size() - 1));
          name += (word ? " " : "") + text(x);
        }
      }
      return name;
    }
    size_t k = params - 1;
    std::string name = text(decl[k].first);
    while (k >= 2 && is(decl[k - 1], "::")) {
      k = before_template_args(decl, k - 2);
      name = text(decl[k].first) + "::" + name;
    }
    if (k >= 1 && is(decl[k - 1], "~")) name = "~" + name;
    return name;
  }

  // For `Owner<...>` ending at decl[k], the index of `Owner`; otherwise k.
  size_t before_template_args(const std::vector<Entry>& decl, size_t k) const {
    if (!is(decl[k], ">")) return k;
    for (int depth = 0; k > 0; --k) {
      depth += is(decl[k], ">") ? 1 : is(decl[k], "<") ? -1 : 0;
      if (depth == 0) return k - 1;
    }
    return 0;
  }

  const std::vector<Token>& t_;
  size_t i_ = 0;
  std::vector<FunctionBody> found_;
};

}  // namespace

std::vector<FunctionBody> function_bodies(const std::vector<Token>& tokens) {
  return Scanner(tokens).run();
}

}  // namespace layering
