#include "scheduler/model/progress_line.h"

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
    return Result<ProgressLine>(bad("missing \"event\" (\"progress\" or \"checkpoint\")"));
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
    return Result<ProgressLine>(ProgressLine{r});
  }
  if (kind == "checkpoint") {
    CheckpointReport r;
    r.step = **step;
    auto p = j.find("path");
    if (p == j.end() || !p->is_string() || p->get<std::string>().empty()) {
      return Result<ProgressLine>(bad("checkpoint needs a non-empty string \"path\""));
    }
    r.path = p->get<std::string>();
    auto st = opt_number(j, "save_time_s", false);
    if (!st) return Result<ProgressLine>(st.error());
    r.save_time_s = *st;
    return Result<ProgressLine>(ProgressLine{r});
  }
  return Result<ProgressLine>(
      bad("unknown event \"" + kind + "\" (expected \"progress\" or \"checkpoint\")"));
}

std::string format_progress_line(const ProgressLine& report) {
  json j;
  if (const auto* p = std::get_if<ProgressReport>(&report)) {
    j["event"] = "progress";
    j["step"] = p->step;
    if (p->tokens) j["tokens"] = *p->tokens;
    if (p->step_time_s) j["step_time_s"] = *p->step_time_s;
    if (p->loss) j["loss"] = *p->loss;
  } else {
    const auto& c = std::get<CheckpointReport>(report);
    j["event"] = "checkpoint";
    j["step"] = c.step;
    j["path"] = c.path;
    if (c.save_time_s) j["save_time_s"] = *c.save_time_s;
  }
  return std::string(kProgressPrefix) + j.dump();
}

}  // namespace orch
