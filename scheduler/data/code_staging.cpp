#include "scheduler/data/code_staging.h"

#include <set>

namespace orch {

CodeStep next_code_step(const std::optional<CodeCopy>& newest) {
  if (!newest) return CodeStep::start;
  switch (newest->state) {
    case TransferState::done:
      return CodeStep::ready;
    case TransferState::queued:
    case TransferState::running:
    case TransferState::verifying:
      return CodeStep::wait;
    case TransferState::failed:
    case TransferState::cancelled:
      return CodeStep::start;
  }
  return CodeStep::start;
}

std::vector<CodeCopyHeld> code_to_prune(const std::vector<CodeCopyHeld>& held,
                                        const std::vector<CodeUse>& uses, Millis now,
                                        Millis keep_ms) {
  std::set<std::string> in_use;
  for (const CodeUse& u : uses) {
    const bool recent = u.ended_ms && now - *u.ended_ms < keep_ms;
    if (u.live || recent || (!u.live && !u.ended_ms)) in_use.insert(u.sha256);
  }
  std::vector<CodeCopyHeld> out;
  for (const CodeCopyHeld& c : held) {
    if (in_use.count(c.sha256) != 0) continue;
    if (now - c.staged_ms < keep_ms) continue;
    out.push_back(c);
  }
  return out;
}

}  // namespace orch
