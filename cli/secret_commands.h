#pragma once
// `orchestrate secret set|grant|list|delete` (docs/security.md "Secrets"): the secrets a job may
// name in its secret_env, by grant. `set` reads the value here, on the administrator's machine,
// from a regular file (a FIFO, a directory or a file over 64 KiB is refused before anything is
// sent) or from this shell's environment, and sends it once; nothing prints a value.

#include <ostream>
#include <string>
#include <vector>

#include "cli/client_commands.h"

namespace orch {

struct SecretSetArgs {
  std::string name;
  std::string from_file;  // exactly one of these two
  std::string from_env;
  std::vector<std::string> teams;  // empty: every team
};

int run_secret_set(const ClientOptions& o, const SecretSetArgs& args, std::ostream& out,
                   std::ostream& err);
int run_secret_grant(const ClientOptions& o, const std::string& name,
                     const std::vector<std::string>& teams, std::ostream& out, std::ostream& err);
int run_secret_list(const ClientOptions& o, std::ostream& out, std::ostream& err);
int run_secret_delete(const ClientOptions& o, const std::string& name, std::ostream& out,
                      std::ostream& err);

// "a,b" and "c" -> [a, b, c]: --teams may be given once with commas or several times.
std::vector<std::string> split_team_list(const std::vector<std::string>& given);

}  // namespace orch
