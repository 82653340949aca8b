// `orchestrate checkpoint ls` (data_commands.h).
#include <chrono>

#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/data_commands.h"
#include "cli/data_render.h"

namespace orch {

int run_checkpoint_ls(const ClientOptions& o, std::int64_t job_id, std::ostream& out,
                      std::ostream& err) {
  nlohmann::json body;
  const std::string target = "/api/v1/jobs/" + std::to_string(job_id) + "/checkpoints";
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  if (as_json(o)) {
    print_json(body, out);
    return kExitOk;
  }
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  render_checkpoints(body, now, out);
  return kExitOk;
}

}  // namespace orch
