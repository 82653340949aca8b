// `orchestrate report providers` and `report cost` (health_commands.h).
#include <nlohmann/json.hpp>

#include "cli/client_call.h"
#include "cli/health_commands.h"
#include "cli/health_render.h"

namespace orch {

int run_report_providers(const ClientOptions& o, int window_days, std::ostream& out,
                         std::ostream& err) {
  std::string target = "/api/v1/reports/providers";
  if (window_days > 0) target += "?window_days=" + std::to_string(window_days);
  nlohmann::json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_scorecards(body, out);
  return kExitOk;
}

int run_report_cost(const ClientOptions& o, const std::string& by, const std::string& since,
                    std::ostream& out, std::ostream& err) {
  const std::string target = with_query("/api/v1/reports/cost", {{"by", by}, {"since", since}});
  nlohmann::json body;
  if (int rc = call_json(o, "GET", target, body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_cost_report(body, out);
  return kExitOk;
}

}  // namespace orch
