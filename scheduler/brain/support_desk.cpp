// Support tickets (support_desk.h).
#include "scheduler/brain/support_desk.h"

#include <algorithm>

namespace orch {
namespace {

constexpr std::size_t kMaxText = 2000;

Result<void> check_text(const std::string& what, const std::string& text, bool required) {
  if (required && text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return make_error(ErrorKind::invalid, what + " is empty; say what the ticket is about");
  }
  if (text.size() > kMaxText) {
    return make_error(ErrorKind::invalid, what + " is longer than " + std::to_string(kMaxText) +
                                              " bytes (" + std::to_string(text.size()) + ")");
  }
  return Ok{};
}

std::string ticket_name(const TicketRow& t) {
  return "ticket " + std::to_string(t.id) + " (" + t.cluster + ")";
}

}  // namespace

Result<TicketRow> SupportDesk::find(std::int64_t id) {
  auto found = store_.ticket(id);
  if (!found) return found.error();
  if (!*found) return make_error(ErrorKind::not_found, "no ticket " + std::to_string(id));
  return **found;
}

Result<BrainReply> SupportDesk::on(const OpenTicket& e) {
  if (!cluster_spec(e.cluster)) {
    std::string names;
    for (const auto& c : clusters_) names += (names.empty() ? "" : ", ") + c.name;
    return make_error(ErrorKind::not_found,
                      "no cluster \"" + e.cluster + "\"; the clusters are: " + names);
  }
  if (auto r = check_text("the summary", e.summary, true); !r) return r.error();
  if (auto r = check_text("the incident", e.incident, false); !r) return r.error();
  auto known = store_.nodes(e.cluster);
  if (!known) return known.error();
  for (const auto& n : e.nodes) {
    const bool listed =
        std::any_of(known->begin(), known->end(), [&](const NodeRow& k) { return k.name == n; });
    if (!listed) {
      std::string names;
      for (const auto& k : *known) names += (names.empty() ? "" : ", ") + k.name;
      return make_error(ErrorKind::invalid,
                        "cluster " + e.cluster + " has no node \"" + n +
                            "\"; its nodes: " + (names.empty() ? "none listed yet" : names));
    }
  }
  const Millis now = clock_.now_ms();
  TicketRow t;
  t.cluster = e.cluster;
  t.summary = e.summary;
  t.nodes = e.nodes;
  t.incident = e.incident;
  t.opened_ms = now;
  auto id = store_.insert_ticket(t);
  if (!id) return id.error();
  t.id = *id;
  if (auto r = store_.add_ticket_note({0, t.id, now, "opened", e.summary}); !r) return r.error();
  std::string msg = ticket_name(t) + " opened: " + e.summary;
  if (!t.nodes.empty()) {
    std::string nodes;
    for (const auto& n : t.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    msg += " (nodes " + nodes + ")";
  }
  if (auto r = store_.add_event(std::nullopt, std::nullopt, now, "ticket-opened", msg); !r) {
    return r.error();
  }
  BrainReply reply;
  reply.ticket_id = t.id;
  reply.state = "open";
  return reply;
}

Result<BrainReply> SupportDesk::on(const NoteTicket& e) {
  auto found = find(e.ticket_id);
  if (!found) return found.error();
  TicketRow t = *found;
  if (auto r = check_text("the update", e.text, true); !r) return r.error();
  if (t.resolved_ms) {
    return make_error(ErrorKind::conflict, ticket_name(t) + " is closed; open a new one");
  }
  const Millis now = clock_.now_ms();
  if (e.from_provider && !t.first_response_ms) {
    t.first_response_ms = now;
    if (auto r = store_.update_ticket(t); !r) return r.error();
  }
  const std::string kind = e.from_provider ? "provider" : "note";
  if (auto r = store_.add_ticket_note({0, t.id, now, kind, e.text}); !r) return r.error();
  BrainReply reply;
  reply.ticket_id = t.id;
  reply.state = "open";
  return reply;
}

Result<BrainReply> SupportDesk::on(const CloseTicket& e) {
  auto found = find(e.ticket_id);
  if (!found) return found.error();
  TicketRow t = *found;
  if (auto r = check_text("the resolution", e.resolution, false); !r) return r.error();
  if (t.resolved_ms) return make_error(ErrorKind::conflict, ticket_name(t) + " is already closed");
  const Millis now = clock_.now_ms();
  t.resolved_ms = now;
  t.resolution = e.resolution;
  if (auto r = store_.update_ticket(t); !r) return r.error();
  if (auto r = store_.add_ticket_note({0, t.id, now, "closed", e.resolution}); !r) {
    return r.error();
  }
  if (auto r = store_.add_event(
          std::nullopt, std::nullopt, now, "ticket-closed",
          ticket_name(t) + " closed" + (e.resolution.empty() ? "" : ": " + e.resolution));
      !r) {
    return r.error();
  }
  BrainReply reply;
  reply.ticket_id = t.id;
  reply.state = "closed";
  return reply;
}

}  // namespace orch
