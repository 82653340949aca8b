#pragma once
// The build's identity, for `orchestrate --version` (issue 42). build_info.cpp is generated in
// the build tree by cli/build_info.cmake at every build (rewritten only when it changes): the
// commit is `git rev-parse` of the source tree's HEAD, "unknown" for a tree without .git.

namespace orch {

const char* build_commit();  // "1a2b3c4d5e6f" or "unknown"
const char* build_type();    // CMAKE_BUILD_TYPE: "Dev", "Release", ...

}  // namespace orch
