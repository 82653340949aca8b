// SiteWorker::execute_fabric: burn-in's fabric step, round after round on the worker's own
// thread (the brain never waits for it), all its pairs' results posted as one FabricCompleted.
#include "scheduler/runtime/site_worker.h"

namespace orch {

bool SiteWorker::execute_fabric(const OutboxRow& action) {
  auto step = fabric_step_from_json(action.payload);
  if (!step) {
    post_(FabricCompleted{action.id, spec_.name, action.token, step.error()});
    return true;
  }
  std::vector<FabricPairResult> all;
  for (std::size_t i = 0; i < step->rounds.size(); ++i) {
    auto round = port_.fabric_round(step->round(i));
    if (!round) {
      post_(FabricCompleted{action.id, spec_.name, action.token, round.error()});
      if (round.error().kind != ErrorKind::unreachable) return true;
      note_reachable(false, round.error().message);
      return false;
    }
    all.insert(all.end(), round->begin(), round->end());
  }
  note_reachable(true);
  post_(FabricCompleted{action.id, spec_.name, action.token, std::move(all)});
  return true;
}

}  // namespace orch
