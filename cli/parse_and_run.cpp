// parse_and_run (client_cli.h): the command line parsed and run, every failure an exit code
// and a message, never an abort.
#include <iostream>

#include "cli/client_cli.h"
#include "scheduler/common/utf8.h"

namespace orch {
namespace {

// The usage error for an exception out of a command: the first argument that is not UTF-8 when
// there is one (the usual cause), else the exception's text.
int report_unforeseen(int argc, const char* const* argv, const std::exception& e,
                      std::ostream& err) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (auto at = first_invalid_utf8(arg)) {
      err << "error: argument " << i << " (" << to_valid_utf8(arg.substr(0, 80))
          << ") is not valid UTF-8 at byte " << *at
          << "; names, reasons and values sent to the server must be UTF-8 text\n";
      return kExitUsage;
    }
  }
  err << "error: " << to_valid_utf8(e.what()) << '\n';
  return kExitUsage;
}

}  // namespace

int parse_and_run(CLI::App& app, int argc, const char* const* argv, std::ostream& out,
                  std::ostream& err) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command failed and already said why
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e, out, err);  // prints help, or the usage error
    if (rc != 0 && std::string(e.what()) == "A subcommand is required") {
      // `orchestrate job`: the command list of the group typed, as its --help shows it.
      const CLI::App* group = &app;
      for (auto subs = group->get_subcommands(); !subs.empty(); subs = group->get_subcommands()) {
        group = subs.front();
      }
      err << '\n' << group->help();
    }
    return rc == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    // A value that cannot go into a request (JSON text must be UTF-8) or anything else a command
    // did not foresee: a usage error that says which argument, never an abort.
    return report_unforeseen(argc, argv, e, err);
  }
  return kExitOk;
}

}  // namespace orch
