#include "web/push_routes.h"

#include <limits>

#include "web/route_helpers.h"

namespace orch {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxRank = 1'000'000;
constexpr std::size_t kMaxNodeChars = 253;  // a DNS name
constexpr std::size_t kMaxEventChars = 64;

// A whole number within [low, high], or nullopt (a fraction, a string, out of range).
std::optional<std::int64_t> whole(const json& value, std::int64_t low, std::int64_t high) {
  std::int64_t n = 0;
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(high)) return std::nullopt;
    n = static_cast<std::int64_t>(value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    n = value.get<std::int64_t>();
  } else {
    return std::nullopt;
  }
  if (n < low || n > high) return std::nullopt;
  return n;
}

std::optional<std::string> read_record(const json& item, const std::string& at,
                                       std::int64_t after_seq, PushRecord& record) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (!item.is_object()) return at + " must be an object (an event-file line with \"seq\")";
  const auto seq = item.contains("seq") ? whole(item["seq"], 1, kMax) : std::nullopt;
  if (!seq) return at + ".seq must be a whole number from 1 (the task's record number)";
  if (*seq <= after_seq) {
    return at + ".seq " + std::to_string(*seq) + " is not above the record before it (" +
           std::to_string(after_seq) + "): seq must rise within a batch";
  }
  const json* event = item.contains("event") ? &item["event"] : nullptr;
  if (!event || !event->is_string() || event->get<std::string>().empty() ||
      event->get<std::string>().size() > kMaxEventChars) {
    return at + ".event must be the record's event, a string of 1 to " +
           std::to_string(kMaxEventChars) + " characters";
  }
  const auto at_ms = item.contains("at_ms") ? whole(item["at_ms"], 0, kMax) : std::nullopt;
  if (!at_ms) return at + ".at_ms must be a whole number of milliseconds since the epoch";
  record.seq = *seq;
  record.event = event->get<std::string>();
  record.at_ms = *at_ms;
  record.json = item.dump(-1, ' ', false, json::error_handler_t::replace);
  return std::nullopt;
}

HttpResponse push(PushApi& api, const HttpRequest& request, const std::string& token) {
  if (request.body.size() > kMaxPushBytes) {
    return problem_response(413, "a push holds at most " + std::to_string(kMaxPushBytes) +
                                     " bytes; this one has " + std::to_string(request.body.size()) +
                                     ": send fewer records");
  }
  const json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return problem_response(400,
                            "the body must be a JSON object: {\"rank\": 0, \"node\": \"n1\", "
                            "\"records\": [{\"seq\": 1, \"event\": \"start\", \"at_ms\": ...}]}");
  }
  if (body.contains("records") && body["records"].is_array() &&
      body["records"].size() > kMaxPushRecords) {
    return problem_response(413, "a push holds at most " + std::to_string(kMaxPushRecords) +
                                     " records; this one has " +
                                     std::to_string(body["records"].size()));
  }
  PushBatch batch;
  batch.token = token;
  if (auto bad = read_push_batch(body, batch)) return problem_response(400, *bad);
  auto answer = api.push(batch);
  if (!answer) return error_response(answer.error());
  if (answer->gone) return problem_response(410, answer->why);
  return json_response(200, json{{"stored", answer->stored}, {"last_seq", answer->last_seq}});
}

// The push store of a server that has none (tests that build the API without one).
class NoPush final : public PushApi {
 public:
  Result<PushAnswer> push(const PushBatch&) override {
    return make_error(ErrorKind::unsupported, "this server takes no records pushed home");
  }
};

}  // namespace

std::optional<std::string> read_push_batch(const nlohmann::json& body, PushBatch& batch) {
  const auto rank = body.contains("rank") ? whole(body["rank"], 0, kMaxRank) : std::nullopt;
  if (!rank) {
    return "rank must be the task's rank in the gang, a whole number from 0 to " +
           std::to_string(kMaxRank);
  }
  batch.rank = static_cast<int>(*rank);
  if (body.contains("node")) {
    if (!body["node"].is_string() || body["node"].get<std::string>().size() > kMaxNodeChars) {
      return "node must be the node's name, a string of at most " + std::to_string(kMaxNodeChars) +
             " characters";
    }
    batch.node = body["node"].get<std::string>();
  }
  if (!body.contains("records") || !body["records"].is_array()) {
    return "records must be a list of the task's records, oldest first";
  }
  std::int64_t after = 0;
  for (std::size_t i = 0; i < body["records"].size(); ++i) {
    PushRecord record;
    const std::string at = "records[" + std::to_string(i) + "]";
    if (auto bad = read_record(body["records"][i], at, after, record)) return bad;
    after = record.seq;
    batch.records.push_back(std::move(record));
  }
  return std::nullopt;
}

RouteTable push_routes(PushApi* api) {
  static NoPush none;
  PushApi* p = api ? api : &none;
  return {{.method = "POST",
           .path = "/api/v1/attempts/{token}/records",
           .lane = Lane::read,  // a quick write of a store of its own: never waits for the brain
           .role = Role::attempt,
           .tag = "attempts",
           .summary = "An attempt's agent pushes a task's records home (its credential only)",
           .body = Body::json_required,
           .body_schema = "PushedRecords",
           .answer_schema = "PushedRecordsStored",
           .errors = {400, 410, 413},
           .handler = [p](const HttpRequest& request, const PathParams& params) {
             return push(*p, request, params.at("token"));
           }}};
}

}  // namespace orch
