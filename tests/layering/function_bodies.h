#pragma once
// The function bodies of one file's tokens, for the function-length check (README.md here).
//
// A `{` at namespace or class scope is a function body when it follows a parameter list `(...)`
// and, after that, only qualifiers (const, volatile, noexcept, override, final, &, &&, throw,
// [[attributes]]), a trailing return type `-> T`, a requires-clause, or a constructor's
// initializer list (the body then follows its last `)` or `}`). A declaration with a top-level
// `=` (other than `operator=`) or `enum` is an initializer; `namespace`, `class`, `struct`,
// `union` and `extern "C"` open a scope that is read the same way. Everything inside a body
// (lambdas, local classes) belongs to it.
#include <string>
#include <vector>

#include "source_tokens.h"

namespace layering {

struct FunctionBody {
  std::string name;  // as written before its parameters: `Placer::try_place`, `operator==`
  int name_line;
  int first_line;  // the declaration's first line (its template line if it has one)
  int lines;       // from the opening brace's line to the closing brace's, both counted
};

std::vector<FunctionBody> function_bodies(const std::vector<Token>& tokens);

}  // namespace layering
