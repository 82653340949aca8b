#include "web/access/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace orch {
namespace {

// Tokens a bucket holds at `now`, from what it held at `at`, refilled at rate and capped.
double refilled(double tokens, Millis at, Millis now, const RoleRate& rate) {
  const double elapsed_s = static_cast<double>(std::max<Millis>(0, now - at)) / 1000.0;
  return std::min(static_cast<double>(rate.burst), tokens + elapsed_s * rate.per_s);
}

}  // namespace

RateLimiter::RateLimiter(const Clock& clock, RateLimits limits) : clock_(clock), limits_(limits) {}

const RoleRate& RateLimiter::rate_of(Role role) const {
  switch (role) {
    case Role::admin:
      return limits_.admin;
    case Role::operator_:
      return limits_.operator_;
    default:
      return limits_.user;  // a viewer changes nothing; its refusals come at a user's rate
  }
}

RateLimiter::Verdict RateLimiter::take(const std::string& user, Role role) {
  const RoleRate& rate = rate_of(role);
  const Millis now = clock_.now_ms();
  Shard& shard = shards_[std::hash<std::string>{}(user) % kShards];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (now - shard.swept >= kSweepEveryMs) sweep(shard, now);
  auto [it, fresh] = shard.buckets.try_emplace(user);
  Bucket& bucket = it->second;
  bucket.tokens = fresh ? rate.burst : refilled(bucket.tokens, bucket.at, now, rate);
  bucket.at = now;
  Verdict verdict;
  verdict.rate = rate;
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
    return verdict;
  }
  verdict.allowed = false;
  const double wait_s = (1.0 - bucket.tokens) / rate.per_s;
  verdict.retry_after_s = std::max(1, static_cast<int>(std::ceil(wait_s)));
  return verdict;
}

void RateLimiter::sweep(Shard& shard, Millis now) const {
  shard.swept = now;
  // A bucket that has refilled to its burst is the same as no bucket. A bucket does not keep
  // its caller's role (a token may be made again with another), so it goes only once it would
  // be full at every role's rate: never before it has refilled.
  for (auto it = shard.buckets.begin(); it != shard.buckets.end();) {
    const Bucket& b = it->second;
    bool full = true;
    for (const RoleRate* r : {&limits_.user, &limits_.operator_, &limits_.admin}) {
      full = full && refilled(b.tokens, b.at, now, *r) >= r->burst;
    }
    it = full ? shard.buckets.erase(it) : std::next(it);
  }
}

std::size_t RateLimiter::buckets() const {
  std::size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    n += shard.buckets.size();
  }
  return n;
}

}  // namespace orch
