#pragma once
// The secret routes (docs/rest-api.md "Secrets"): GET /api/v1/secrets (names and grants, never
// values), PUT and DELETE /api/v1/secrets/{name}, POST /api/v1/secrets/{name}/grant. Who may
// call each is in access/route_roles.cpp (listing: viewer; the rest: admin).

#include "web/router.h"
#include "web/secrets_api.h"

namespace orch {

void add_secret_routes(Router& router, SecretsApi& backend);

}  // namespace orch
