#pragma once
// The values of a job's secret_env, read on the server just before a launch (and once at submit,
// to refuse a spec whose secrets cannot be read). Errors name the variable and where it was to
// come from, never a value.

#include <map>
#include <string>

#include "scheduler/common/result.h"
#include "scheduler/model/site_types.h"

namespace orch {

inline constexpr std::size_t kMaxSecretBytes = 64 * 1024;

// Each source's value: a file's content with one trailing newline dropped, or the variable of
// this process's environment. invalid when a file cannot be read, is larger than
// kMaxSecretBytes or holds a NUL byte, or a variable is not set.
Result<std::map<std::string, std::string>> read_secret_values(
    const std::map<std::string, SecretSource>& sources);

}  // namespace orch
