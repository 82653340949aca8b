#include "web/access/guarded_api.h"

#include "web/access/access_routes.h"
#include "web/api_routes.h"
#include "web/code_routes.h"
#include "web/openapi.h"
#include "web/page_routes.h"
#include "web/push_routes.h"

namespace orch {

RouteTable GuardedApi::route_table(ApiBackend& backend, AccessStore& store,
                                   const RefusedRequests& refused, CodeApi* code, PushApi* push) {
  RouteTable table = api_routes(backend, &refused);
  append(table, code_routes(code));
  append(table, push_routes(push));
  append(table, access_routes(store));
  append(table, page_routes());
  append_openapi_route(table);  // last: it describes every row before it
  return table;
}

Router GuardedApi::make_router(const RouteTable& table) {
  Router router;
  add_rows(router, table);
  return router;
}

GuardedApi::GuardedApi(ApiBackend& backend, AccessStore& store, GuardOptions options, CodeApi* code,
                       PushApi* push)
    : table_(route_table(backend, store, refused_, code, push)),
      router_(make_router(table_)),
      guard_(router_, store, std::move(options), refused_) {}

}  // namespace orch
