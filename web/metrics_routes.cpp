#include "web/metrics_routes.h"

#include "web/metrics_text.h"

namespace orch {

void add_metrics_route(Router& router, MetricsApi& api) {
  MetricsApi* m = &api;
  router.add("GET", "/metrics", [m](const HttpRequest&, const PathParams&) {
    auto snapshot = m->metrics();
    if (!snapshot) return error_response(snapshot.error());
    HttpResponse r;
    r.content_type = kPrometheusContentType;
    r.body = metrics_text(*snapshot);
    return r;
  });
}

}  // namespace orch
