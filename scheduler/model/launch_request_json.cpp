#include "scheduler/model/launch_request_json.h"

namespace orch {

nlohmann::json launch_request_to_json(const LaunchRequest& r) {
  return {{"token", r.token},
          {"job_id", r.job_id},
          {"attempt_no", r.attempt_no},
          {"job_name", r.job_name},
          {"command", r.command},
          {"env", r.env},
          {"nodes", r.nodes},
          {"gpus_per_node", r.gpus_per_node},
          {"exclude_nodes", r.exclude_nodes}};
}

Result<LaunchRequest> launch_request_from_json(const nlohmann::json& j) {
  try {
    LaunchRequest r;
    r.token = j.at("token").get<std::string>();
    r.job_id = j.at("job_id").get<std::int64_t>();
    r.attempt_no = j.at("attempt_no").get<int>();
    r.job_name = j.at("job_name").get<std::string>();
    r.command = j.at("command").get<std::string>();
    r.env = j.at("env").get<std::map<std::string, std::string>>();
    r.nodes = j.at("nodes").get<int>();
    r.gpus_per_node = j.at("gpus_per_node").get<int>();
    r.exclude_nodes = j.value("exclude_nodes", std::vector<std::string>{});
    return r;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::internal, std::string("not a launch request: ") + e.what());
  }
}

}  // namespace orch
