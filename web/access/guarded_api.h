#pragma once
// The whole REST API as the server runs it: the backend's routes and the access routes, behind
// the AccessGuard. The composition root and the tests build it the same way.

#include "web/access/access_guard.h"
#include "web/access/access_store.h"
#include "web/api_backend.h"
#include "web/code_api.h"
#include "web/push_api.h"
#include "web/refused_requests.h"
#include "web/route_table.h"
#include "web/router.h"

namespace orch {

class GuardedApi {
 public:
  // code: the server's workdir archives (web/code_api.h); null: the code routes answer 501.
  // push: the records agents push home (web/push_api.h); null: the push route answers 501.
  GuardedApi(ApiBackend& backend, AccessStore& store, GuardOptions options, CodeApi* code = nullptr,
             PushApi* push = nullptr);
  GuardedApi(const GuardedApi&) = delete;
  GuardedApi& operator=(const GuardedApi&) = delete;

  HttpResponse handle(const HttpRequest& request) const { return guard_.handle(request); }
  Lane lane_of(const HttpRequest& request) const { return router_.lane_of(request); }
  const Router& router() const { return router_; }
  // The one table the router, the guard's roles and the OpenAPI document come from.
  const RouteTable& routes() const { return table_; }

  // Every row of the server, in the router's order: the API's (api_routes), the code and push
  // routes, the access routes, the page and GET /api/v1/openapi.json (whose document describes
  // them all).
  static RouteTable route_table(ApiBackend& backend, AccessStore& store,
                                const RefusedRequests& refused, CodeApi* code = nullptr,
                                PushApi* push = nullptr);

 private:
  static Router make_router(const RouteTable& table);
  RefusedRequests refused_;  // the guard counts, GET /metrics shows
  RouteTable table_;
  Router router_;
  AccessGuard guard_;  // after router_, which it reads
};

}  // namespace orch
