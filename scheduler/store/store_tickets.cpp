// Support tickets and their notes (store.h, "Support tickets").
#include <string>

#include "scheduler/model/json_text.h"
#include "scheduler/store/store.h"
#include "scheduler/store/store_shared.h"

namespace orch {
namespace {

constexpr const char* kTicketSelect =
    "SELECT id, cluster, summary, nodes, incident, opened_ms, first_response_ms, resolved_ms, "
    "resolution FROM tickets ";

TicketRow read_ticket(const Stmt& s) {
  TicketRow t;
  t.id = s.col_int(0);
  t.cluster = s.col_text(1);
  t.summary = s.col_text(2);
  auto nodes = nlohmann::json::parse(s.col_text(3), nullptr, false);
  if (nodes.is_array()) {
    for (const auto& n : nodes) {
      if (n.is_string()) t.nodes.push_back(n.get<std::string>());
    }
  }
  t.incident = s.col_text(4);
  t.opened_ms = s.col_int(5);
  t.first_response_ms = s.col_opt_int(6);
  t.resolved_ms = s.col_opt_int(7);
  t.resolution = s.col_text(8);
  return t;
}

}  // namespace

Result<std::int64_t> Store::insert_ticket(const TicketRow& t) {
  if (auto ok =
          execute(db_,
                  "INSERT INTO tickets(cluster, summary, nodes, incident, opened_ms, "
                  "first_response_ms, resolved_ms, resolution) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  t.cluster, t.summary, json_text(nlohmann::json(t.nodes)), t.incident, t.opened_ms,
                  t.first_response_ms, t.resolved_ms, t.resolution);
      !ok) {
    return ok.error();
  }
  return db_.last_insert_id();
}

Result<void> Store::update_ticket(const TicketRow& t) {
  return execute(db_,
                 "UPDATE tickets SET summary = ?, nodes = ?, incident = ?, first_response_ms = ?, "
                 "resolved_ms = ?, resolution = ? WHERE id = ?",
                 t.summary, json_text(nlohmann::json(t.nodes)), t.incident, t.first_response_ms,
                 t.resolved_ms, t.resolution, t.id);
}

Result<std::optional<TicketRow>> StoreReader::ticket(std::int64_t id) {
  return query_one(db_, std::string(kTicketSelect) + "WHERE id = ?", read_ticket, id);
}

Result<std::vector<TicketRow>> StoreReader::tickets(const std::string& cluster,
                                                    std::optional<bool> open, int limit) {
  const int which = !open ? 0 : (*open ? 1 : 2);
  return query(
      db_,
      std::string(kTicketSelect) +
          "WHERE (?1 = '' OR cluster = ?1) AND (?2 = 0 OR (?2 = 1) = (resolved_ms IS NULL)) "
          "ORDER BY id DESC LIMIT ?3",
      read_ticket, cluster, which, limit);
}

Result<std::vector<TicketRow>> StoreReader::tickets_since(Millis since_ms) {
  return query(db_,
               std::string(kTicketSelect) +
                   "WHERE opened_ms >= ?1 OR resolved_ms IS NULL OR resolved_ms >= ?1 ORDER BY id",
               read_ticket, since_ms);
}

Result<std::int64_t> Store::add_ticket_note(const TicketNoteRow& n) {
  if (auto ok =
          execute(db_, "INSERT INTO ticket_notes(ticket_id, at_ms, kind, text) VALUES (?, ?, ?, ?)",
                  n.ticket_id, n.at_ms, n.kind, n.text);
      !ok) {
    return ok.error();
  }
  return db_.last_insert_id();
}

Result<std::vector<TicketNoteRow>> StoreReader::ticket_notes(std::int64_t ticket_id) {
  return query(
      db_,
      "SELECT id, ticket_id, at_ms, kind, text FROM ticket_notes WHERE ticket_id = ? ORDER BY id",
      [](const Stmt& s) {
        return TicketNoteRow{s.col_int(0), s.col_int(1), s.col_int(2), s.col_text(3),
                             s.col_text(4)};
      },
      ticket_id);
}

}  // namespace orch
