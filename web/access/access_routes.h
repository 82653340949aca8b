#pragma once
// The routes of who may call the API: tokens made, listed and revoked, and the audit log read
// (all admin only: their rows say so). Bound to an AccessStore that must outlive the router.

#include "web/access/access_store.h"
#include "web/router.h"

namespace orch {

RouteTable access_routes(AccessStore& store);

// A token row and an audit row as the API shows them.
nlohmann::json token_json(const TokenRow& row);
nlohmann::json audit_json(const AuditRow& row);

}  // namespace orch
