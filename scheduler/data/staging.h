#pragma once
// Datasets and placement, pure (issue 5): how long a job would wait for its data at a site,
// and what that costs in expected goodput; plus the small rules of transfers and audits.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/common/clock.h"
#include "scheduler/model/manifest.h"
#include "scheduler/model/site_types.h"

namespace orch {

// Bandwidth between two sites, bytes/s: the median rate of the latest completed copies between
// them (either direction), each bytes / seconds, ignoring copies under 1 MiB; `prior` (default
// 100 MB/s) when none.
struct CopySample {
  std::int64_t bytes = 0;
  double seconds = 0;
};
double estimate_bandwidth(const std::vector<CopySample>& samples, double prior = 100e6);

// Seconds to stage `bytes` at `bandwidth_bps` (0 bytes: 0; no bandwidth: infinity).
double staging_seconds(std::int64_t bytes, double bandwidth_bps);

// Whether a resume should wait for a newer checkpoint held at another site (issue 15): the steps
// the local one would redo, at the job's measured step time, against copying the newer one here
// (its bytes over the measured bandwidth). Staging wins when the copy is shorter than the redo.
// floor_step is the oldest local step that loses no more than the copy would: newer_step -
// floor(copy_s / step_s), at least 0 (a copy that cannot be timed, 0: no floor). Without a
// measured step time the redo cannot be timed: the newer copy is staged (nothing is known to be
// lost by waiting for it) and the floor is the newer step.
struct ResumeWeighing {
  std::int64_t local_step = 0;  // the newest usable checkpoint here; 0: from the start
  std::int64_t newer_step = 0;
  std::optional<double> step_s;  // the job's measured seconds per step
  std::int64_t bytes = 0;
  double redo_s = 0;  // (newer_step - local_step) x step_s
  double copy_s = 0;  // staging_seconds(bytes, bandwidth)
  bool stage = false;
  std::int64_t floor_step = 0;
};
ResumeWeighing weigh_resume(std::int64_t local_step, std::int64_t newer_step,
                            std::optional<double> step_s, std::int64_t bytes, double bandwidth_bps);
// "resuming from step 140 redoes 60 steps (~24 s at 0.40 s/step); copying step 200 (12.0 MB)
// takes ~0.1 s", for the job's events.
std::string describe_weighing(const ResumeWeighing& w);

// The expected-goodput factor of a start delayed by staging: the share of the job's horizon
// left for training, horizon / (horizon + staging_s). Horizon default: one day. No staging: 1;
// infinite staging (or no horizon): 0.
double staging_factor(double staging_s, double horizon_s = 86400.0);

// What a job placed at a cluster still needs: each dataset with its verified copy there (path),
// or where to stage it from (the verified copy with the best measured bandwidth), or none.
struct DatasetNeed {
  std::string dataset;
  std::int64_t bytes = 0;
  std::optional<std::string> present_path;  // verified copy at the cluster
  std::optional<std::string> source;        // else: the cluster to copy from
  bool in_flight = false;                   // a copy to the cluster is under way
};

// Environment variable for a dataset's path: ORCH_DATASET_<NAME> (upper case; every character
// that is not a letter or digit becomes '_').
std::string dataset_env_name(const std::string& dataset);

// Retry delay of a transfer after `tries` failed copies: 5 s doubling, at most 5 min (5, 10, 20,
// 40, 80, 160, 300 s ...); 0 before any failure. A transfer fails for good after kTransferMaxTries.
Millis transfer_retry_delay_ms(int tries);
constexpr int kTransferMaxTries = 8;

// Which files an audit hashes: one file of the manifest per round, rotating (`round` counts
// the copy's audits), so every file is hashed over time while one audit stays cheap. Only files
// the manifest has a SHA-256 for can be compared, so the rotation runs over those (in path order);
// none: empty. A one-file copy's path is "" (the copy itself).
std::vector<std::string> audit_sample(const Manifest& manifest, std::int64_t round);

// Resume candidates at a cluster: checkpoints (newest first, at most `limit`) whose copy there is
// verified, with that copy's path and the checkpoint's manifest. Ties in step: the higher id
// first; one candidate per checkpoint; limit <= 0: none.
struct CheckpointCopy {
  std::int64_t checkpoint_id = 0;
  std::int64_t step = 0;
  std::string cluster;
  std::string path;
  bool verified = false;
  Manifest manifest;
  std::string within;  // the directory it must lie in at its site (ResumeCandidate::within)
  std::string node;    // on this node's own disk (tiered checkpoints); empty: shared storage
};
// A checkpoint with copies in both tiers there gives two candidates, the node's own first (the
// fastest to read; the shared one if its check fails); `limit` counts checkpoints.
std::vector<ResumeCandidate> resume_candidates(const std::vector<CheckpointCopy>& copies,
                                               const std::string& cluster, int limit = 3);

}  // namespace orch
