#pragma once
// Where the CLI finds its API token (docs/security.md), first found wins:
//   1. $ORCH_TOKEN;
//   2. the file named by $ORCH_TOKEN_FILE;
//   3. <DIR>/admin.token for the server state directory it was pointed at: --state DIR (or
//      $ORCH_STATE), readable only by the server's user;
//   4. $XDG_CONFIG_HOME/orchestrate/token (default ~/.config/orchestrate/token).
// Only what this user told it: never a path the answering server names, so whoever holds the
// port cannot make the CLI read a file and send it. Internal to cli/.

#include <string>

namespace orch {

// The token, or "" when none is found (the server then answers 401 and says where to put one).
// state_dir: the --state the command was given ("" for none; $ORCH_STATE then).
std::string find_token(const std::string& state_dir);

// The token in a file: its first line, trimmed; "" when unreadable, not a regular file, or
// longer than a token can be.
std::string read_token_file(const std::string& path);

}  // namespace orch
