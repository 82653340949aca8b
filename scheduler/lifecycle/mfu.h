#pragma once
// Model FLOP utilisation: achieved model FLOP/s over the peak of the accelerators used.
//   MFU = (tokens / step_time) * flops_per_token / (gpus * peak FLOP/s per gpu)
// MFU is work over time: an attempt's is its total tokens over its total step time, a minute's or
// a cluster's the sum of MFU x time over the time (never a mean of per-step ratios, which
// over-weights fast steps). An MFU above 100% (or below 0) is not a measurement but a
// configuration error: the model's size or the cluster's peak FLOP/s is wrong.

#include <optional>
#include <string>

#include "scheduler/spec/job_spec.h"

namespace orch {

// nullopt when any input is missing or not positive.
std::optional<double> compute_mfu(double tokens, double seconds,
                                  std::optional<double> flops_per_token, int gpus,
                                  std::optional<double> peak_flops_per_gpu);

// Whether an MFU can be a measurement: a finite number in [0, 1].
bool mfu_plausible(double mfu);

// A step's MFU as the figures take it: nullopt when unknown, implausible, or the attempt's MFU is
// flagged (`flag` not empty).
std::optional<double> counted_mfu(std::optional<double> mfu, const std::string& flag);

// The attempt's flag for an implausible MFU, naming what to fix: "model size or peak FLOPs
// misconfigured: MFU 46633% is above 100% (model.parameters 7e+10: 4.2e+11 FLOP per token; peak
// 1 TFLOP/s per GPU x 2 GPUs on alpha); ...". "" when the MFU is plausible.
std::string mfu_flag_text(double mfu, const ModelSpec& model,
                          std::optional<double> peak_flops_per_gpu, int gpus,
                          const std::string& cluster);

}  // namespace orch
