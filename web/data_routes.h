#pragma once
// The checkpoint and data routes of /api/v1 (issue 5): a job's checkpoints and their copies,
// datasets, replication, transfers and the integrity audit. Internal to web/: make_api_router
// adds them; see docs/rest-api.md.

#include "web/data_api.h"
#include "web/router.h"

namespace orch {

RouteTable data_routes(DataApi& backend);

// A dataset name: 1..100 letters, digits, '-', '_' and '.', not only dots (it names a folder).
bool valid_dataset_name(const std::string& name);

}  // namespace orch
