#pragma once
// Requests the access guard refused before any route ran, by status, since the server started:
// GET /metrics shows them as orchestrate_refused_requests_total. The guard counts from every
// handler thread, so each count is an atomic and nothing here takes a lock.

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orch {

class RefusedRequests {
 public:
  // One more refusal answered with status; a status the guard never answers counts as "other".
  void add(int status);
  // ("400", n), ("401", n), ... ("other", n): every status the guard refuses with, zeros
  // included, so that a scrape sees each series from the start.
  std::vector<std::pair<std::string, std::int64_t>> totals() const;

 private:
  static constexpr std::array<int, 6> kStatuses = {400, 401, 403, 415, 421, 429};
  std::array<std::atomic<std::int64_t>, kStatuses.size() + 1> counts_{};  // the last: other
};

}  // namespace orch
