#pragma once
// The secret routes (docs/rest-api.md "Secrets"): GET /api/v1/secrets (names and grants, never
// values), PUT and DELETE /api/v1/secrets/{name}, POST /api/v1/secrets/{name}/grant. Who may
// call each is in its row (listing: viewer; the rest: admin).

#include "web/router.h"
#include "web/secrets_api.h"

namespace orch {

RouteTable secret_routes(SecretsApi& backend);

}  // namespace orch
