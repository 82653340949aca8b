// The ticket routes (ticket_routes.h).
#include "web/ticket_routes.h"

#include <optional>
#include <string>

#include "web/route_helpers.h"

namespace orch {
namespace {

using nlohmann::json;
using routes::answer;
using routes::answer_body;
using routes::parse_id;
using routes::query_value;
using routes::read_limit;
using routes::read_object;
using routes::read_string;
using routes::shown;

constexpr int kDefaultTickets = 100;
constexpr std::size_t kMaxNodes = 256;

HttpResponse open_ticket(HealthApi& backend, const HttpRequest& request) {
  const std::string example =
      R"({"cluster": "alpha", "summary": "a3 loses its IB link", "nodes": ["a3"]})";
  json body;
  if (auto bad = read_object(request, false, example, body)) return *bad;
  TicketRequest t;
  if (auto bad = read_string(body, "cluster", true, example, t.cluster)) return *bad;
  if (auto bad = read_string(body, "summary", true, example, t.summary)) return *bad;
  if (auto bad = read_string(body, "incident", false, example, t.incident)) return *bad;
  if (auto it = body.find("nodes"); it != body.end() && !it->is_null()) {
    if (!it->is_array() || it->size() > kMaxNodes) {
      return problem_response(422, "\"nodes\" must be a list of at most " +
                                       std::to_string(kMaxNodes) + " node names, e.g. " + example);
    }
    for (const auto& n : *it) {
      if (!n.is_string()) {
        return problem_response(422,
                                "\"nodes\" must hold node names (strings), got " + shown(n.dump()));
      }
      t.nodes.push_back(n.get<std::string>());
    }
  }
  return answer_body(backend.open_ticket(t), 201);
}

HttpResponse list_tickets(HealthApi& backend, const HttpRequest& request) {
  int limit = kDefaultTickets;
  if (auto bad = read_limit(request, limit)) return *bad;
  const std::string state = query_value(request, "state").value_or("");
  if (state != "" && state != "open" && state != "closed") {
    return problem_response(400, "state must be open or closed, got " + shown(state));
  }
  return answer(backend.list_tickets(query_value(request, "cluster").value_or(""), state, limit));
}

// A route on /api/v1/tickets/{id}...: a bad id is a 400 before the backend runs.
template <typename Route>
RouteHandler with_ticket_id(Route route) {
  return [route](const HttpRequest& request, const PathParams& params) {
    auto id = parse_id(params.at("id"), "ticket id");
    if (!id) return problem_response(400, id.error().message);
    return route(request, *id);
  };
}

HttpResponse note_ticket(HealthApi& backend, const HttpRequest& request, std::int64_t id) {
  const std::string example = R"({"text": "replaced the cable", "from_provider": true})";
  json body;
  if (auto bad = read_object(request, false, example, body)) return *bad;
  std::string text;
  if (auto bad = read_string(body, "text", true, example, text)) return *bad;
  bool from_provider = false;
  if (auto it = body.find("from_provider"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return problem_response(422, "\"from_provider\" must be true or false, e.g. " + example);
    }
    from_provider = it->get<bool>();
  }
  return answer_body(backend.note_ticket(id, text, from_provider), 200);
}

HttpResponse close_ticket(HealthApi& backend, const HttpRequest& request, std::int64_t id) {
  const std::string example = R"({"resolution": "node replaced"} or no body)";
  json body;
  if (auto bad = read_object(request, true, example, body)) return *bad;
  std::string resolution;
  if (auto bad = read_string(body, "resolution", false, example, resolution)) return *bad;
  return answer_body(backend.close_ticket(id, resolution), 200);
}

}  // namespace

RouteTable ticket_routes(HealthApi& backend) {
  HealthApi* b = &backend;
  return {{.method = "POST",
           .path = "/api/v1/tickets",
           .lane = Lane::command,
           .role = Role::operator_,
           .tag = "tickets",
           .summary = "Open a support ticket with a cluster's provider",
           .body = Body::json_required,
           .body_schema = "TicketOpen",
           .ok = 201,
           .answer_schema = "Ticket",
           .errors = {404, 422},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return open_ticket(*b, request); }},
          {.method = "GET",
           .path = "/api/v1/tickets",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "tickets",
           .summary = "Tickets, newest first",
           .query = {{"cluster", "string", "one cluster's"},
                     {"state", "string", "open or closed"},
                     {"limit", "integer", "1 to 1000"}},
           .answer_schema = "TicketList",
           .errors = {400},
           .handler = [b](const HttpRequest& request,
                          const PathParams&) { return list_tickets(*b, request); }},
          {.method = "GET",
           .path = "/api/v1/tickets/{id}",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "tickets",
           .summary = "A ticket with its notes",
           .answer_schema = "Ticket",
           .errors = {400, 404},
           .handler = with_ticket_id(
               [b](const HttpRequest&, std::int64_t id) { return answer(b->get_ticket(id)); })},
          {.method = "POST",
           .path = "/api/v1/tickets/{id}/updates",
           .lane = Lane::command,
           .role = Role::operator_,
           .tag = "tickets",
           .summary = "Add a note (the provider's first one times the response)",
           .body = Body::json_required,
           .body_schema = "TicketNote",
           .answer_schema = "Ticket",
           .errors = {404, 409, 422},
           .handler = with_ticket_id([b](const HttpRequest& request, std::int64_t id) {
             return note_ticket(*b, request, id);
           })},
          {.method = "POST",
           .path = "/api/v1/tickets/{id}/close",
           .lane = Lane::command,
           .role = Role::operator_,
           .tag = "tickets",
           .summary = "Close a ticket",
           .body = Body::json_optional,
           .body_schema = "TicketClose",
           .answer_schema = "Ticket",
           .errors = {404, 409},
           .handler = with_ticket_id([b](const HttpRequest& request, std::int64_t id) {
             return close_ticket(*b, request, id);
           })}};
}

}  // namespace orch
