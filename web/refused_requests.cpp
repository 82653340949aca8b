#include "web/refused_requests.h"

namespace orch {

void RefusedRequests::add(int status) {
  std::size_t i = 0;
  while (i < kStatuses.size() && kStatuses[i] != status) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::pair<std::string, std::int64_t>> RefusedRequests::totals() const {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (std::size_t i = 0; i <= kStatuses.size(); ++i) {
    out.emplace_back(i < kStatuses.size() ? std::to_string(kStatuses[i]) : "other",
                     counts_[i].load(std::memory_order_relaxed));
  }
  return out;
}

}  // namespace orch
