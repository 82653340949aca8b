#pragma once
// The brain's support part (issue 15): tickets a team opens with a cluster's provider, the
// provider's answers and the resolution, each at the brain's clock. The provider scorecard reads
// them (open tickets, time to first response, time to resolution).

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/brain_event.h"

namespace orch {

class SupportDesk : BrainPart {
 public:
  explicit SupportDesk(BrainCore& core) : BrainPart(core) {}

  Result<BrainReply> on(const OpenTicket& e);
  Result<BrainReply> on(const NoteTicket& e);
  Result<BrainReply> on(const CloseTicket& e);

 private:
  // The ticket, or not_found naming it.
  Result<TicketRow> find(std::int64_t id);
};

}  // namespace orch
