#pragma once
// The whole ApiBackend for the tests that need every route (the server, the CLI commands, the
// route guard, the fuzz target): the three scripted fakes in one object. They share one
// FakeApiShared (fake_api_shared.h), so `fail` and `throw_everywhere` reach every route, and
// every call holds the same lock. Not final: a test may script some routes over it
// (tests/unit/cli/job_logs_test.cpp).

#include "tests/unit/web/fake_data_api.h"
#include "tests/unit/web/fake_health_api.h"
#include "tests/unit/web/fake_jobs_api.h"
#include "tests/unit/web/fake_metrics_api.h"
#include "tests/unit/web/fake_secrets_api.h"
#include "web/api_backend.h"

namespace orch::testing {

class FakeBackend : public ApiBackend,
                          public FakeJobsApi,
                          public FakeHealthApi,
                          public FakeDataApi,
                          public FakeMetricsApi,
                          public FakeSecretsApi {};

}  // namespace orch::testing
