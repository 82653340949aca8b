#pragma once
// The client commands of who may use the server (issue 16): `token create|list|revoke` and
// `audit`. Like client_commands.h, each writes to the streams and returns the exit code.

#include <ostream>
#include <string>
#include <vector>

#include "cli/client_commands.h"

namespace orch {

// Prints the new token once (on out, alone on its line with -o json left out) and how to use it.
// teams: the teams a user may submit for (the first is its default).
int run_token_create(const ClientOptions& o, const std::string& name, const std::string& role,
                     const std::vector<std::string>& teams, std::ostream& out, std::ostream& err);
int run_token_list(const ClientOptions& o, std::ostream& out, std::ostream& err);
int run_token_revoke(const ClientOptions& o, const std::string& name, std::ostream& out,
                     std::ostream& err);
// The newest `limit` entries of the audit log (0: the server's default of 100), before the
// entry id `before` when given.
int run_audit(const ClientOptions& o, int limit, const std::string& before, std::ostream& out,
              std::ostream& err);

}  // namespace orch
