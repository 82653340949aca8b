#pragma once
// What the checkpoint and data routes (data_routes.cpp, issue 5) need from the rest of the
// system: one part of ApiBackend (api_backend.h, which also says how an Error's kind becomes an
// HTTP status).

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scheduler/common/result.h"

namespace orch {

// GET /data/transfers: a page, newest first, grouped by purpose and job (issue 42); all false
// keeps the active ones (queued, running, verifying) and the failed ones.
struct TransferFilter {
  bool all = false;
  int limit = 100;
  std::int64_t cursor = 0;  // the previous page's "next": only transfers older than it (0: none)
};

// POST /data/replicate: a dataset, or a job's newest verified checkpoint, to a cluster.
struct ReplicateRequest {
  std::string dataset;      // either this ...
  std::int64_t job_id = 0;  // ... or this (0: none)
  std::string to;
};

class DataApi {
 public:
  virtual ~DataApi() = default;

  // A job's checkpoints newest first, each with its copies.
  virtual Result<nlohmann::json> job_checkpoints(std::int64_t id) = 0;
  // Every dataset with its copies.
  virtual Result<nlohmann::json> list_datasets() = 0;
  // Registers a dataset whose first copy is at cluster:path (invalid for a cluster that is not
  // configured, conflict for a name taken).
  virtual Result<nlohmann::json> register_dataset(const std::string& name,
                                                  const std::string& cluster,
                                                  const std::string& path) = 0;
  // Starts (or finds) the transfer that puts a copy at request.to.
  virtual Result<nlohmann::json> replicate_data(const ReplicateRequest& request) = 0;
  virtual Result<nlohmann::json> list_transfers(const TransferFilter& filter) = 0;
  virtual Result<nlohmann::json> get_transfer(std::int64_t id) = 0;
  // Bytes copied by every transfer together in each of the last `minutes` minutes (issue 42).
  virtual Result<nlohmann::json> transfer_throughput(int minutes) = 0;
  // Checks every copy at cluster now (empty: at every cluster).
  virtual Result<nlohmann::json> start_audit(const std::string& cluster) = 0;
};

}  // namespace orch
