#pragma once
// The text of agents/torch_probe.py, embedded at build time (agents/embed_text.cmake writes
// torch_probe_script.cpp into the build tree), so the agent ships it without a file beside it.

#include <string_view>

namespace orch::agent {

std::string_view torch_probe_script();

}  // namespace orch::agent
