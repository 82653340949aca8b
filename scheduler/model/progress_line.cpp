// Parsing and printing protocol lines (progress_line.h; docs/progress-protocol.md).
#include "scheduler/model/progress_line.h"

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace orch {
namespace {

using nlohmann::json;

Error bad(const std::string& why) {
  return make_error(ErrorKind::invalid, "bad progress line: " + why);
}

// Reads an optional non-negative integer field; an error names the field.
Result<std::optional<std::int64_t>> opt_count(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<std::int64_t>{};
  if (!it->is_number_integer() && !it->is_number_unsigned()) {
    return bad(std::string("\"") + key + "\" must be a non-negative integer");
  }
  auto v = it->get<std::int64_t>();
  if (v < 0) return bad(std::string("\"") + key + "\" must be >= 0, got " + std::to_string(v));
  return std::optional<std::int64_t>{v};
}

Result<std::optional<double>> opt_number(const json& j, const char* key, bool positive) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<double>{};
  if (!it->is_number()) return bad(std::string("\"") + key + "\" must be a number");
  double v = it->get<double>();
  if (positive && !(v > 0)) return bad(std::string("\"") + key + "\" must be > 0");
  return std::optional<double>{v};
}

// "ranks": [{"rank": 0, "node": "n1", "step_time_s": 0.2}, ...]; an error names the entry and
// its field, e.g. "ranks[2].step_time_s must be > 0".
Result<std::vector<RankStepTime>> opt_ranks(const json& j) {
  std::vector<RankStepTime> out;
  auto it = j.find("ranks");
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) return bad("\"ranks\" must be an array of objects");
  out.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& e = (*it)[i];
    const std::string at = "ranks[" + std::to_string(i) + "]";
    if (!e.is_object()) return bad(at + " must be an object");
    RankStepTime r;
    auto rank = e.find("rank");
    if (rank == e.end() || !(rank->is_number_integer() || rank->is_number_unsigned()) ||
        rank->get<std::int64_t>() < 0 ||
        rank->get<std::int64_t>() > std::numeric_limits<int>::max()) {
      return bad(at + ".rank must be an integer >= 0");
    }
    r.rank = static_cast<int>(rank->get<std::int64_t>());
    auto node = e.find("node");
    if (node == e.end() || !node->is_string() || node->get<std::string>().empty()) {
      return bad(at + ".node must be a non-empty string");
    }
    r.node = node->get<std::string>();
    auto st = e.find("step_time_s");
    if (st == e.end() || !st->is_number() || !(st->get<double>() > 0)) {
      return bad(at + ".step_time_s must be a number > 0");
    }
    r.step_time_s = st->get<double>();
    out.push_back(std::move(r));
  }
  return out;
}

// "tier" and "node" of a checkpoint line: a local copy names its node, a shared one may not.
Result<void> read_tier(const json& j, CheckpointReport& r) {
  auto tier = j.find("tier");
  if (tier != j.end() && !(tier->is_string() && (*tier == "local" || *tier == "shared"))) {
    return bad("\"tier\" must be \"local\" or \"shared\"");
  }
  if (tier != j.end() && *tier == "local") r.tier = CheckpointTier::local;
  auto node = j.find("node");
  if (node != j.end() && (!node->is_string() || node->get<std::string>().empty())) {
    return bad("\"node\" must be a non-empty string (the node whose disk holds the copy)");
  }
  if (node != j.end()) r.node = node->get<std::string>();
  if (r.tier == CheckpointTier::local && r.node.empty()) {
    return bad("a checkpoint with \"tier\":\"local\" needs \"node\" ($ORCH_NODE_NAME)");
  }
  if (r.tier == CheckpointTier::shared && !r.node.empty()) {
    return bad("\"node\" is for \"tier\":\"local\" only (a shared copy is on no one node)");
  }
  return Ok{};
}

}  // namespace

std::optional<Result<ProgressLine>> parse_progress_line(std::string_view line) {
  if (line.substr(0, kProgressPrefix.size()) != kProgressPrefix) return std::nullopt;
  std::string_view body = line.substr(kProgressPrefix.size());
  while (!body.empty() && (body.back() == '\r' || body.back() == '\n')) body.remove_suffix(1);
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Result<ProgressLine>(bad("not valid JSON after the prefix"));
  if (!j.is_object()) return Result<ProgressLine>(bad("expected a JSON object"));
  auto ev = j.find("event");
  if (ev == j.end() || !ev->is_string()) {
    return Result<ProgressLine>(
        bad("missing \"event\" (\"progress\", \"checkpoint_start\" or \"checkpoint\")"));
  }
  auto step = opt_count(j, "step");
  if (!step) return Result<ProgressLine>(step.error());
  if (!step->has_value()) return Result<ProgressLine>(bad("missing \"step\""));

  const std::string kind = ev->get<std::string>();
  if (kind == "progress") {
    ProgressReport r;
    r.step = **step;
    auto tokens = opt_count(j, "tokens");
    if (!tokens) return Result<ProgressLine>(tokens.error());
    r.tokens = *tokens;
    auto st = opt_number(j, "step_time_s", true);
    if (!st) return Result<ProgressLine>(st.error());
    r.step_time_s = *st;
    auto loss = opt_number(j, "loss", false);
    if (!loss) return Result<ProgressLine>(loss.error());
    r.loss = *loss;
    auto ranks = opt_ranks(j);
    if (!ranks) return Result<ProgressLine>(ranks.error());
    r.ranks = std::move(ranks).value();
    return Result<ProgressLine>(ProgressLine{std::move(r)});
  }
  if (kind == "checkpoint" || kind == "checkpoint_start") {
    auto p = j.find("path");
    if (p == j.end() || !p->is_string() || p->get<std::string>().empty()) {
      return Result<ProgressLine>(bad(kind + " needs a non-empty string \"path\""));
    }
    if (kind == "checkpoint_start") {
      return Result<ProgressLine>(
          ProgressLine{CheckpointStartReport{**step, p->get<std::string>()}});
    }
    CheckpointReport r;
    r.step = **step;
    r.path = p->get<std::string>();
    auto st = opt_number(j, "save_time_s", false);
    if (!st) return Result<ProgressLine>(st.error());
    r.save_time_s = *st;
    if (auto tier = read_tier(j, r); !tier) return Result<ProgressLine>(tier.error());
    return Result<ProgressLine>(ProgressLine{r});
  }
  return Result<ProgressLine>(
      bad("unknown event \"" + kind +
          "\" (expected \"progress\", \"checkpoint_start\" or \"checkpoint\")"));
}

std::string format_progress_line(const ProgressLine& report) {
  json j;
  if (const auto* p = std::get_if<ProgressReport>(&report)) {
    j["event"] = "progress";
    j["step"] = p->step;
    if (p->tokens) j["tokens"] = *p->tokens;
    if (p->step_time_s) j["step_time_s"] = *p->step_time_s;
    if (p->loss) j["loss"] = *p->loss;
    if (!p->ranks.empty()) {
      json ranks = json::array();
      for (const auto& r : p->ranks) {
        ranks.push_back({{"rank", r.rank}, {"node", r.node}, {"step_time_s", r.step_time_s}});
      }
      j["ranks"] = std::move(ranks);
    }
  } else if (const auto* s = std::get_if<CheckpointStartReport>(&report)) {
    j["event"] = "checkpoint_start";
    j["step"] = s->step;
    j["path"] = s->path;
  } else {
    const auto& c = std::get<CheckpointReport>(report);
    j["event"] = "checkpoint";
    j["step"] = c.step;
    j["path"] = c.path;
    if (c.save_time_s) j["save_time_s"] = *c.save_time_s;
    if (c.tier == CheckpointTier::local) {
      j["tier"] = "local";
      j["node"] = c.node;
    }
  }
  return std::string(kProgressPrefix) + j.dump();
}

}  // namespace orch
