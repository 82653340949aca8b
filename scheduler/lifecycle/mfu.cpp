#include "scheduler/lifecycle/mfu.h"

#include <cmath>
#include <cstdio>

namespace orch {
namespace {

std::string general(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// What the job says its model costs per token, as its spec has it.
std::string model_text(const ModelSpec& model) {
  auto fpt = model_flops_per_token(model);
  if (model.flops_per_token) return "model.flops_per_token " + general(*model.flops_per_token);
  if (!model.parameters || !fpt) return "model size unknown";
  return "model.parameters " + general(*model.parameters) + ": " + general(*fpt) +
         " FLOP per token";
}

}  // namespace

std::optional<double> compute_mfu(double tokens, double seconds,
                                  std::optional<double> flops_per_token, int gpus,
                                  std::optional<double> peak_flops_per_gpu) {
  if (!flops_per_token || !peak_flops_per_gpu || tokens <= 0 || seconds <= 0 || gpus <= 0 ||
      *flops_per_token <= 0 || *peak_flops_per_gpu <= 0) {
    return std::nullopt;
  }
  double achieved = tokens / seconds * *flops_per_token;
  return achieved / (gpus * *peak_flops_per_gpu);
}

bool mfu_plausible(double mfu) {
  return std::isfinite(mfu) && mfu >= 0 && mfu <= 1;
}

std::optional<double> counted_mfu(std::optional<double> mfu, const std::string& flag) {
  if (!mfu || !flag.empty() || !mfu_plausible(*mfu)) return std::nullopt;
  return mfu;
}

std::string mfu_flag_text(double mfu, const ModelSpec& model,
                          std::optional<double> peak_flops_per_gpu, int gpus,
                          const std::string& cluster) {
  if (mfu_plausible(mfu)) return "";
  char figure[64];
  std::snprintf(figure, sizeof figure, "MFU %.0f%% is %s", mfu * 100.0,
                mfu < 0 ? "below 0" : "above 100%");
  const std::string peak =
      peak_flops_per_gpu ? general(*peak_flops_per_gpu / 1e12) + " TFLOP/s" : "unknown";
  return std::string("model size or peak FLOPs misconfigured: ") + figure + " (" +
         model_text(model) + "; peak " + peak + " per GPU x " + std::to_string(gpus) + " GPUs on " +
         cluster +
         "): check the job's model.parameters (or model.flops_per_token) and tokens per step "
         "(global batch x sequence), and the cluster's accelerator or peak_tflops";
}

}  // namespace orch
