#include "web/api_routes.h"

#include <exception>

#include "web/data_routes.h"
#include "web/health_routes.h"
#include "web/job_routes.h"
#include "web/metrics_routes.h"
#include "web/secret_routes.h"
#include "web/ticket_routes.h"

namespace orch {

RouteTable api_routes(ApiBackend& backend, const RefusedRequests* refused) {
  RouteTable table = {{.method = "GET",
                       .path = "/healthz",
                       .lane = Lane::probe,
                       .role = Role::open,
                       .tag = "server",
                       .summary = "Liveness and the brain's queue",
                       .answer_schema = "Health",
                       .handler = [](const HttpRequest&, const PathParams&) {
                         return json_response(200, nlohmann::json{{"status", "ok"}});
                       }}};
  append(table, job_routes(backend));
  append(table, health_routes(backend));
  append(table, ticket_routes(backend));
  append(table, data_routes(backend));
  append(table, secret_routes(backend));
  append(table, metrics_routes(backend, refused));
  return table;
}

Router make_api_router(ApiBackend& backend, const RefusedRequests* refused) {
  Router router;
  add_rows(router, api_routes(backend, refused));
  return router;
}

std::vector<LaneOptions> api_lanes() {
  std::vector<LaneOptions> lanes(kLaneCount);
  auto set = [&lanes](Lane lane, int threads, std::size_t max_waiting) {
    lanes[static_cast<std::size_t>(lane)] = {to_string(lane), threads, max_waiting};
  };
  // Sized for what each kind waits on: reads on the database (as many as can usefully run at
  // once), commands on the single brain thread (more threads would only queue there), provider
  // calls on remote sites, one at a time per few sites.
  set(Lane::probe, 1, 256);
  set(Lane::read, 8, 4096);
  set(Lane::command, 4, 4096);
  set(Lane::provider, 4, 256);
  return lanes;
}

HttpResponse handle_api(ApiBackend& backend, const HttpRequest& request) {
  try {
    return make_api_router(backend).dispatch(request);
  } catch (const std::exception& e) {
    return problem_response(500, std::string("internal error: ") + e.what());
  } catch (...) {
    return problem_response(500, "internal error");
  }
}

}  // namespace orch
