// The fabric step's values as the outbox carries them (fabric_step.h).
#include "scheduler/model/fabric_step.h"

namespace orch {

FabricRoundRequest FabricStep::round(std::size_t i) const {
  FabricRoundRequest r;
  r.token = token + "-r" + std::to_string(i + 1);
  if (i < rounds.size()) r.pairs = rounds[i];
  r.all_reduce_perf = all_reduce_perf;
  r.bytes = bytes;
  r.gpus_per_node = gpus_per_node;
  r.timeout_s = timeout_s;
  return r;
}

nlohmann::json fabric_step_to_json(const FabricStep& step) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& round : step.rounds) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& [a, b] : round) pairs.push_back({a, b});
    rounds.push_back(std::move(pairs));
  }
  return {{"token", step.token},
          {"fabric",
           {{"rounds", rounds},
            {"all_reduce_perf", step.all_reduce_perf},
            {"bytes", step.bytes},
            {"gpus_per_node", step.gpus_per_node},
            {"timeout_s", step.timeout_s}}}};
}

bool is_fabric_step(const nlohmann::json& payload) {
  return payload.is_object() && payload.contains("fabric");
}

Result<FabricStep> fabric_step_from_json(const nlohmann::json& payload) {
  try {
    FabricStep s;
    s.token = payload.at("token").get<std::string>();
    const nlohmann::json& f = payload.at("fabric");
    for (const auto& round : f.at("rounds")) {
      std::vector<NodePair> pairs;
      for (const auto& p : round) {
        pairs.emplace_back(p.at(0).get<std::string>(), p.at(1).get<std::string>());
      }
      s.rounds.push_back(std::move(pairs));
    }
    s.all_reduce_perf = f.at("all_reduce_perf").get<std::string>();
    s.bytes = f.value("bytes", s.bytes);
    s.gpus_per_node = f.value("gpus_per_node", s.gpus_per_node);
    s.timeout_s = f.value("timeout_s", s.timeout_s);
    return s;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::internal, std::string("not a fabric step: ") + e.what());
  }
}

nlohmann::json fabric_results_to_json(const std::vector<FabricPairResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json j = {{"a", r.a}, {"b", r.b}};
    j["busbw_gb_s"] = r.busbw_gb_s ? nlohmann::json(*r.busbw_gb_s) : nlohmann::json(nullptr);
    if (!r.error.empty()) j["error"] = r.error;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace orch
