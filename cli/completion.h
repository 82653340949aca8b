#pragma once
// `orchestrate completion bash|zsh`: shell completion scripts generated from the CLI11 command
// tree itself, so every subcommand and option added to the CLI completes without another edit.
// Only app.cpp and the CLI tests include this header (CLI11 is slow to compile).

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace orch {

// The script for `shell` ("bash" or "zsh"; empty for any other). It completes subcommands at
// every level, options (with those of the enclosing commands, which fall through) after "-",
// and file names elsewhere. `program` is the command's name ("orchestrate").
std::string completion_script(const CLI::App& app, std::string_view shell,
                              const std::string& program);

}  // namespace orch
