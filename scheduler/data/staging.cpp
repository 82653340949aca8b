// Staging, transfer retries, audit samples and resume candidates (staging.h).
#include "scheduler/data/staging.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace orch {
namespace {

constexpr std::int64_t kMinSampleBytes = 1 << 20;  // smaller copies measure latency, not bandwidth
constexpr Millis kFirstRetryMs = 5'000;
constexpr Millis kMaxRetryMs = 300'000;

}  // namespace

double estimate_bandwidth(const std::vector<CopySample>& samples, double prior) {
  std::vector<double> rates;
  for (const CopySample& s : samples) {
    if (s.bytes < kMinSampleBytes || !(s.seconds > 0)) continue;
    rates.push_back(static_cast<double>(s.bytes) / s.seconds);
  }
  if (rates.empty()) return prior;
  std::sort(rates.begin(), rates.end());
  const std::size_t mid = rates.size() / 2;
  return rates.size() % 2 == 1 ? rates[mid] : (rates[mid - 1] + rates[mid]) / 2;
}

double staging_seconds(std::int64_t bytes, double bandwidth_bps) {
  if (bytes <= 0) return 0;
  if (!(bandwidth_bps > 0)) return std::numeric_limits<double>::infinity();
  return static_cast<double>(bytes) / bandwidth_bps;
}

ResumeWeighing weigh_resume(std::int64_t local_step, std::int64_t newer_step,
                            std::optional<double> step_s, std::int64_t bytes,
                            double bandwidth_bps) {
  ResumeWeighing w;
  w.local_step = std::max<std::int64_t>(0, local_step);
  w.newer_step = newer_step;
  w.step_s = step_s && *step_s > 0 ? step_s : std::nullopt;
  w.bytes = bytes;
  w.copy_s = staging_seconds(bytes, bandwidth_bps);
  if (!w.step_s) {
    w.stage = newer_step > w.local_step;
    w.floor_step = newer_step;
    return w;
  }
  w.redo_s = static_cast<double>(std::max<std::int64_t>(0, newer_step - w.local_step)) * *w.step_s;
  w.stage = newer_step > w.local_step && w.copy_s < w.redo_s;
  if (std::isinf(w.copy_s)) {
    w.floor_step = 0;
  } else {
    const double affordable = std::floor(w.copy_s / *w.step_s);
    w.floor_step = affordable >= static_cast<double>(newer_step)
                       ? 0
                       : newer_step - static_cast<std::int64_t>(affordable);
  }
  return w;
}

namespace {

std::string seconds_text(double s) {
  char buf[32];
  if (std::isinf(s)) return "for ever (no measured bandwidth)";
  std::snprintf(buf, sizeof buf, s < 10 ? "~%.1f s" : "~%.0f s", s);
  return buf;
}

}  // namespace

std::string describe_weighing(const ResumeWeighing& w) {
  std::string out = w.local_step > 0 ? "resuming from step " + std::to_string(w.local_step)
                                     : std::string("starting over");
  const std::int64_t redo = std::max<std::int64_t>(0, w.newer_step - w.local_step);
  out += " redoes " + std::to_string(redo) + " step" + (redo == 1 ? "" : "s");
  if (w.step_s) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.2f", *w.step_s);
    out += " (" + seconds_text(w.redo_s) + " at " + rate + " s/step)";
  } else {
    out += " (no step time measured yet)";
  }
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(w.bytes) / 1e6);
  out += "; copying step " + std::to_string(w.newer_step) + " (" + size + ") takes " +
         seconds_text(w.copy_s);
  return out;
}

double staging_factor(double staging_s, double horizon_s) {
  if (!(staging_s > 0)) return 1.0;
  if (!(horizon_s > 0) || std::isinf(staging_s)) return 0.0;
  return horizon_s / (horizon_s + staging_s);
}

std::string dataset_env_name(const std::string& dataset) {
  std::string out = "ORCH_DATASET_";
  for (char c : dataset) {
    if (c >= 'a' && c <= 'z') {
      out += static_cast<char>(c - 'a' + 'A');
    } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      out += c;
    } else {
      out += '_';
    }
  }
  return out;
}

Millis transfer_retry_delay_ms(int tries) {
  if (tries <= 0) return 0;
  Millis delay = kFirstRetryMs;
  for (int i = 1; i < tries && delay < kMaxRetryMs; ++i) delay *= 2;
  return std::min(delay, kMaxRetryMs);
}

std::vector<std::string> audit_sample(const Manifest& manifest, std::int64_t round) {
  // Only files registered with a hash can be checked by one; the rest are checked by size.
  std::vector<const ManifestFile*> hashed;
  for (const ManifestFile& f : manifest.files) {
    if (!f.sha256.empty()) hashed.push_back(&f);
  }
  if (hashed.empty()) return {};
  const auto n = static_cast<std::int64_t>(hashed.size());
  const std::int64_t i = ((round % n) + n) % n;
  return {hashed[static_cast<std::size_t>(i)]->path};
}

std::vector<ResumeCandidate> resume_candidates(const std::vector<CheckpointCopy>& copies,
                                               const std::string& cluster, int limit) {
  std::vector<const CheckpointCopy*> here;
  for (const CheckpointCopy& c : copies) {
    if (c.cluster == cluster && c.verified) here.push_back(&c);
  }
  std::stable_sort(here.begin(), here.end(), [](const CheckpointCopy* a, const CheckpointCopy* b) {
    if (a->step != b->step) return a->step > b->step;
    if (a->checkpoint_id != b->checkpoint_id) return a->checkpoint_id > b->checkpoint_id;
    return !a->node.empty() && b->node.empty();
  });
  std::vector<ResumeCandidate> out;
  std::set<std::int64_t> checkpoints;
  std::set<std::pair<std::int64_t, bool>> tiers;  // one copy per checkpoint and tier
  for (const CheckpointCopy* c : here) {
    const bool first_of_checkpoint = checkpoints.count(c->checkpoint_id) == 0;
    if (first_of_checkpoint && static_cast<int>(checkpoints.size()) >= limit) break;
    if (!tiers.insert({c->checkpoint_id, c->node.empty()}).second) continue;
    checkpoints.insert(c->checkpoint_id);
    out.push_back(
        ResumeCandidate{c->checkpoint_id, c->step, c->path, c->manifest, c->within, c->node});
  }
  return out;
}

}  // namespace orch
