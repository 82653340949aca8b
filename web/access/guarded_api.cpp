#include "web/access/guarded_api.h"

#include "web/access/access_routes.h"
#include "web/api_routes.h"
#include "web/openapi.h"
#include "web/page_routes.h"

namespace orch {

Router GuardedApi::make_router(ApiBackend& backend, AccessStore& store,
                               const RefusedRequests& refused) {
  Router router = make_api_router(backend, &refused);
  add_access_routes(router, store);
  add_page_routes(router);
  add_openapi_route(router);
  return router;
}

GuardedApi::GuardedApi(ApiBackend& backend, AccessStore& store, GuardOptions options)
    : router_(make_router(backend, store, refused_)),
      guard_(router_, store, std::move(options), refused_) {}

}  // namespace orch
