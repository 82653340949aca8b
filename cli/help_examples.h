#pragma once
// Every command's `--help` ends with an example (issue 42): one table of examples by command
// path, attached to the CLI11 tree once it is built. A command group's help shows its
// commands' first examples. Only app.cpp and the CLI tests include this header (CLI11).

#include <string>

#include <CLI/CLI.hpp>

namespace orch {

// The example lines of the command at `path` ("job submit"; "" for the program), each a whole
// command line; "" when the table has none.
std::string help_example(const std::string& path);

// Appends "Example(s):" and the table's lines to the footer of every command of app that is
// shown in help (hidden ones, group "", are left alone). Call it after every command is added.
void add_help_examples(CLI::App& app);

}  // namespace orch
