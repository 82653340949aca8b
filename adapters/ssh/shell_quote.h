#pragma once
// The one function that quotes a value for a POSIX shell. Every value that goes into a command
// line run by a remote shell (sbatch arguments, paths, job names, rsync arguments) goes through
// shell_quote(), so no value can ever be read as shell syntax: not `$(...)`, backticks, globs,
// `;`, newlines, or bytes that are not UTF-8.
//
// The form is single quotes, with each ' written as '\'' : inside single quotes a POSIX shell
// (sh, dash, bash, zsh in sh mode) takes every byte literally. The one byte no command line can
// carry is NUL; a value containing it is refused rather than silently truncated.

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/result.h"

namespace orch {

Result<std::string> shell_quote(std::string_view value);

// argv as one command line: every word quoted, joined by spaces.
Result<std::string> shell_command(const std::vector<std::string>& argv);

}  // namespace orch
