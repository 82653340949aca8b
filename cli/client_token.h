#pragma once
// Where the CLI finds its API token (docs/security.md), first found wins:
//   1. $ORCH_TOKEN;
//   2. the file named by $ORCH_TOKEN_FILE;
//   3. $XDG_CONFIG_HOME/orchestrate/token (default ~/.config/orchestrate/token);
//   4. for a server on this machine, the admin token file its /healthz names, when this user
//      can read it (the server's own user can; nobody else).
// Internal to cli/.

#include <string>

#include "web/http_client.h"

namespace orch {

// The token for server_url, or "" when none is found (the server then answers 401 and says
// where to put one). Remembered per URL for the life of the process. `request` gives the
// timeout and CA for the /healthz call.
std::string find_token(const std::string& server_url, const RequestOptions& request);

// The token in a file: its first line, trimmed; "" when unreadable.
std::string read_token_file(const std::string& path);

}  // namespace orch
