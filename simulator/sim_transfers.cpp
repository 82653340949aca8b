// Copies between simulated sites (sim_transfers.h).
#include "simulator/sim_transfers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orch::sim {

SimTransfers::SimTransfers(StoreReader& reader, SimWorld& world, std::mutex& lock,
                           double bytes_per_s, std::int64_t epoch_ms, Post post)
    : reader_(reader),
      world_(world),
      lock_(lock),
      bytes_per_s_(bytes_per_s),
      epoch_ms_(epoch_ms),
      post_(std::move(post)) {}

double SimTransfers::next_finish() const {
  double t = std::numeric_limits<double>::infinity();
  for (const auto& [id, c] : running_) t = std::min(t, c.done_s);
  return t;
}

void SimTransfers::step(double t) {
  auto active = reader_.transfers(true, 1000);
  if (!active) return;
  const auto now_ms = epoch_ms_ + static_cast<std::int64_t>(std::llround(t * 1000));
  std::lock_guard<std::mutex> hold(lock_);
  // A copy the brain gave up on (cancelled, or the copy it replaced) is no longer made.
  std::erase_if(running_, [&](const auto& kv) {
    return std::none_of(active->begin(), active->end(),
                        [&](const TransferRow& r) { return r.id == kv.first; });
  });
  for (const TransferRow& row : *active) {
    const auto from = world_.cluster_index(row.src_cluster);
    const auto to = world_.cluster_index(row.dst_cluster);
    auto it = running_.find(row.id);
    if (it == running_.end()) {
      if (row.state != TransferState::queued) continue;
      if (row.next_try_ms && *row.next_try_ms > now_ms) continue;
      if (!from || !to) {
        post_(TransferFinished{row.id, make_error(ErrorKind::unsupported,
                                                  "no simulated route between " + row.src_cluster +
                                                      " and " + row.dst_cluster)});
        continue;
      }
      const std::int64_t bytes = world_.copy_bytes(*from, row.src_path);
      running_[row.id] = Copy{t + static_cast<double>(bytes) / bytes_per_s_, bytes, t};
      TransferProgress p;
      p.bytes_total = static_cast<std::uint64_t>(bytes);
      p.rate_bytes_per_s = bytes_per_s_;
      p.route = "simulated";
      post_(TransferProgressed{row.id, p});
      continue;
    }
    if (it->second.done_s > t) continue;
    const Copy copy = it->second;
    running_.erase(it);
    if (!world_.reachable(*from) || !world_.reachable(*to)) {
      post_(TransferFinished{row.id, make_error(ErrorKind::unreachable,
                                                "a simulated site of the copy does not answer")});
      continue;
    }
    if (!world_.copy(*from, row.src_path, *to, row.dst_path)) {
      post_(TransferFinished{
          row.id, make_error(ErrorKind::io, row.src_path + " is gone from " + row.src_cluster)});
      continue;
    }
    post_(TransferFinished{row.id, TransferOutcome{static_cast<std::uint64_t>(copy.bytes),
                                                   t - copy.started_s, "simulated", 0}});
  }
}

}  // namespace orch::sim
