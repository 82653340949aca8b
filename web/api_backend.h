#pragma once
// What the REST routes need from the rest of the system. The composition root (cli/) supplies
// the real backend (store reads + brain commands); web tests supply a fake. Keeping this seam
// means web/ never includes the store or the brain, and the brain never sees HTTP.
//
// Each routes file asks only for its own part: JobsApi (jobs_api.h, for api_routes.cpp),
// HealthApi (health_api.h, health_routes.cpp), DataApi (data_api.h, data_routes.cpp) and
// MetricsApi (metrics_api.h, metrics_routes.cpp) and SecretsApi (secrets_api.h,
// secret_routes.cpp). ApiBackend is the five in one object, what make_api_router binds every route
// to. They are virtual bases so that a class may implement them in separate pieces (the web tests
// have one fake per part) and still be one ApiBackend.
//
// Every method returns JSON ready to send or an Error whose kind picks the HTTP status:
// invalid -> 400 (422 for a well-formed body with bad content), not_found -> 404,
// conflict -> 409, unreachable/unsupported -> 503/501, others -> 500.

#include "web/data_api.h"
#include "web/health_api.h"
#include "web/jobs_api.h"
#include "web/metrics_api.h"
#include "web/secrets_api.h"

namespace orch {

class ApiBackend : public virtual JobsApi,
                   public virtual HealthApi,
                   public virtual DataApi,
                   public virtual MetricsApi,
                   public virtual SecretsApi {};

}  // namespace orch
