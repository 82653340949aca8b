#pragma once
// A token bucket per caller for the API's changes (docs/security.md): each change takes a
// token; the bucket refills at the caller's role's rate up to its burst; an empty bucket is a
// 429 with how long to wait. Per user (the token's name), never per address, so callers behind
// one proxy do not share a bucket and one caller on many machines does.
//
// The guard asks from every handler thread: the buckets are split over shards, each behind its
// own mutex held for one map lookup and a little arithmetic. Memory is bounded: only callers
// with a live token get a bucket, and a bucket that has refilled to its burst (the same as
// none) is dropped when its shard is next used a minute or more after its last sweep.

#include <array>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "scheduler/common/clock.h"
#include "scheduler/model/rate_limits.h"
#include "web/access/role.h"

namespace orch {

class RateLimiter {
 public:
  RateLimiter(const Clock& clock, RateLimits limits);

  struct Verdict {
    bool allowed = true;
    RoleRate rate;          // the caller's role's
    int retry_after_s = 0;  // when refused: whole seconds until a token is there, >= 1
  };
  // Takes a token from user's bucket (refilled at role's rate first).
  Verdict take(const std::string& user, Role role);

  const RoleRate& rate_of(Role role) const;
  // Buckets held now, over all shards (for tests of the bound).
  std::size_t buckets() const;

 private:
  struct Bucket {
    double tokens = 0;
    Millis at = 0;  // when tokens was last brought up to date
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, Bucket> buckets;
    Millis swept = 0;
  };
  static constexpr std::size_t kShards = 16;
  static constexpr Millis kSweepEveryMs = 60'000;
  void sweep(Shard& shard, Millis now) const;  // shard.mu held

  const Clock& clock_;
  RateLimits limits_;
  std::array<Shard, kShards> shards_;
};

}  // namespace orch
