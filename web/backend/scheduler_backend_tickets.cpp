// SchedulerBackend's support tickets (issue 15): commands go through the brain, reads through a
// reader connection.
#include "scheduler/brain/brain_event.h"
#include "web/backend/json_values.h"
#include "web/backend/scheduler_backend.h"

namespace orch {

using nlohmann::json;

namespace {

json ticket_json(const TicketRow& t) {
  return {{"id", t.id},
          {"cluster", t.cluster},
          {"summary", t.summary},
          {"nodes", t.nodes},
          {"incident", t.incident},
          {"state", t.resolved_ms ? "closed" : "open"},
          {"opened_ms", t.opened_ms},
          {"first_response_ms", opt(t.first_response_ms)},
          {"resolved_ms", opt(t.resolved_ms)},
          {"resolution", t.resolution}};
}

}  // namespace

Result<json> SchedulerBackend::get_ticket(std::int64_t id) {
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  auto t = reader.ticket(id);
  if (!t) return t.error();
  if (!*t) return make_error(ErrorKind::not_found, "no ticket " + std::to_string(id));
  auto notes = reader.ticket_notes(id);
  if (!notes) return notes.error();
  json history = json::array();
  for (const auto& n : *notes) {
    history.push_back({{"at_ms", n.at_ms}, {"kind", n.kind}, {"text", n.text}});
  }
  json out = ticket_json(**t);
  out["history"] = std::move(history);
  return out;
}

Result<json> SchedulerBackend::open_ticket(const TicketRequest& r) {
  auto reply = loop_.call(OpenTicket{r.cluster, r.summary, r.nodes, r.incident});
  if (!reply) return reply.error();
  return get_ticket(reply->ticket_id);
}

Result<json> SchedulerBackend::note_ticket(std::int64_t id, const std::string& text,
                                           bool from_provider) {
  auto reply = loop_.call(NoteTicket{id, text, from_provider});
  if (!reply) return reply.error();
  return get_ticket(id);
}

Result<json> SchedulerBackend::close_ticket(std::int64_t id, const std::string& resolution) {
  auto reply = loop_.call(CloseTicket{id, resolution});
  if (!reply) return reply.error();
  return get_ticket(id);
}

Result<json> SchedulerBackend::list_tickets(const std::string& cluster, const std::string& state,
                                            int limit) {
  if (!cluster.empty() && !spec_of(cluster)) {
    return make_error(ErrorKind::not_found, "no cluster named \"" + cluster + "\"");
  }
  auto lease = readers_->lease();
  if (!lease) return lease.error();
  StoreReader& reader = **lease;
  std::optional<bool> open;
  if (!state.empty()) open = state == "open";
  auto rows = reader.tickets(cluster, open, limit);
  if (!rows) return rows.error();
  json out = json::array();
  for (const auto& t : *rows) out.push_back(ticket_json(t));
  return json{{"tickets", out}};
}

}  // namespace orch
