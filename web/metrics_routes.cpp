#include "web/metrics_routes.h"

#include "web/metrics_text.h"

namespace orch {

RouteTable metrics_routes(MetricsApi& api, const RefusedRequests* refused) {
  MetricsApi* m = &api;
  return {{.method = "GET",
           .path = "/metrics",
           .lane = Lane::read,
           .role = Role::viewer,
           .tag = "server",
           .summary = "The fleet and the server's health in Prometheus's text format",
           .answer = Answer::metrics,
           .errors = {503},
           .handler = [m, refused](const HttpRequest&, const PathParams&) {
             auto snapshot = m->metrics();
             if (!snapshot) return error_response(snapshot.error());
             if (refused != nullptr) snapshot->refused_requests = refused->totals();
             HttpResponse r;
             r.content_type = kPrometheusContentType;
             r.body = metrics_text(*snapshot);
             return r;
           }}};
}

}  // namespace orch
