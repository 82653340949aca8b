#include "web/metrics_routes.h"

#include "web/metrics_text.h"

namespace orch {

void add_metrics_route(Router& router, MetricsApi& api, const RefusedRequests* refused) {
  MetricsApi* m = &api;
  router.add("GET", "/metrics", [m, refused](const HttpRequest&, const PathParams&) {
    auto snapshot = m->metrics();
    if (!snapshot) return error_response(snapshot.error());
    if (refused != nullptr) snapshot->refused_requests = refused->totals();
    HttpResponse r;
    r.content_type = kPrometheusContentType;
    r.body = metrics_text(*snapshot);
    return r;
  });
}

}  // namespace orch
