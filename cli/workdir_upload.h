#pragma once
// `orchestrate job submit` with a `workdir:` (issue 40, docs/rest-api.md "Code"): packs the
// directory (cli/workdir_pack.h), asks the server whether it already holds that archive for
// this user (GET /api/v1/code/{sha256}) and uploads it only when not (PUT), so an unchanged tree
// is never sent twice.

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/client_commands.h"

namespace orch {

// When the spec (spec_text, read from spec_file) names a workdir: packs it (relative paths from
// the spec file's directory), uploads it if the server lacks it, and sets `query` to
// "&workdir=sha256:<hex>" for the submit's target; tells on err what it sent or skipped. A spec
// without one (or one that does not parse: the server will say why) leaves query empty. Returns
// an exit code (kExitUsage when the tree cannot be packed, with the reason on err).
int prepare_workdir(const ClientOptions& o, const std::string& spec_file,
                    const std::string& spec_text, std::uint64_t limit, std::string& query,
                    std::ostream& err);

// The workdir directory the spec names, resolved against the spec file's directory ("~/" is
// $HOME).
std::string resolve_workdir(const std::string& spec_file, const std::string& source);

}  // namespace orch
