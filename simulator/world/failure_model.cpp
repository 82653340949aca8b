// Failure laws, cause mixes and the merged failure trace of simulated nodes (failure_model.h).
#include "simulator/world/failure_model.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <boost/math/special_functions/gamma.hpp>

namespace orch::sim {
namespace {

bool positive(double x) {
  return std::isfinite(x) && x > 0;
}

}  // namespace

Result<void> FailureLaw::check() const {
  if (!positive(mtbf_s)) {
    return make_error(ErrorKind::invalid,
                      "the mean time between failures must be a number of seconds above 0, got " +
                          std::to_string(mtbf_s));
  }
  if (!(job_mtbf_s >= 0)) {
    return make_error(ErrorKind::invalid,
                      "a job's own mean time between failures must be 0 (none) "
                      "or more seconds, got " +
                          std::to_string(job_mtbf_s));
  }
  if (kind == Kind::weibull && !positive(shape)) {
    return make_error(ErrorKind::invalid,
                      "a Weibull failure law needs a shape above 0, got " + std::to_string(shape));
  }
  return Ok{};
}

double FailureLaw::weibull_scale() const {
  return mtbf_s / std::tgamma(1.0 + 1.0 / shape);
}

const std::vector<FailureCause>& llama3_cause_mix() {
  static const std::vector<FailureCause> mix = {
      {"gpu", 30.1}, {"hbm", 17.2},     {"software", 12.9},     {"network", 8.4},
      {"host", 7.6}, {"gpu-sram", 4.5}, {"gpu-processor", 4.1}, {"other", 100.0 - 84.8},
  };
  return mix;
}

Result<CauseMix> CauseMix::make(std::vector<FailureCause> causes) {
  if (causes.empty()) return make_error(ErrorKind::invalid, "a cause mix needs at least one cause");
  double total = 0;
  for (const auto& c : causes) {
    if (!std::isfinite(c.share) || c.share < 0) {
      return make_error(ErrorKind::invalid, "cause \"" + c.name +
                                                "\": a share must be a number of 0 or more, got " +
                                                std::to_string(c.share));
    }
    total += c.share;
  }
  if (total <= 0) return make_error(ErrorKind::invalid, "a cause mix's shares sum to 0");
  CauseMix mix;
  double running = 0;
  for (const auto& c : causes) {
    running += c.share;
    mix.cumulative_.push_back(running / total);
  }
  mix.cumulative_.back() = 1.0;  // no draw falls past the end by rounding
  mix.causes_ = std::move(causes);
  return mix;
}

const std::string& CauseMix::pick(double u) const {
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  const auto i = static_cast<std::size_t>(std::min<std::ptrdiff_t>(
      it - cumulative_.begin(), static_cast<std::ptrdiff_t>(causes_.size()) - 1));
  return causes_[i].name;
}

Result<FailureTrace> FailureTrace::make(std::uint64_t seed, const FailureLaw& law,
                                        std::vector<SimNodeSpec> nodes, const CauseMix* causes) {
  if (auto ok = law.check(); !ok) return ok.error();
  if (causes == nullptr) return make_error(ErrorKind::invalid, "a failure trace needs a cause mix");
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!positive(nodes[i].rate_multiplier)) {
      return make_error(ErrorKind::invalid, "node " + std::to_string(i) +
                                                ": a failure rate multiplier must be above 0");
    }
  }
  return FailureTrace(seed, law, std::move(nodes), causes);
}

FailureTrace::FailureTrace(std::uint64_t seed, const FailureLaw& law,
                           std::vector<SimNodeSpec> nodes, const CauseMix* causes)
    : law_(law), nodes_(std::move(nodes)), causes_(causes) {
  if (law_.kind == FailureLaw::Kind::weibull) weibull_scale_ = law_.weibull_scale();
  streams_.reserve(nodes_.size());
  std::vector<Pending> first;
  first.reserve(nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    streams_.emplace_back(seed, i);
    first.push_back({draw_first_gap(i), i});
  }
  heap_ = decltype(heap_)(std::greater<>(), std::move(first));
}

double FailureTrace::draw_gap(std::size_t node) {
  SimRandom& r = streams_[node];
  const double gap = law_.kind == FailureLaw::Kind::weibull ? r.weibull(law_.shape, weibull_scale_)
                                                            : r.exponential(law_.mtbf_s);
  return gap / nodes_[node].rate_multiplier;
}

double FailureTrace::draw_first_gap(std::size_t node) {
  if (law_.kind != FailureLaw::Kind::weibull || law_.fresh_nodes) return draw_gap(node);
  // The equilibrium distribution of a Weibull's gaps: F(t) = P(1/k, (t/scale)^k), P the
  // regularised lower incomplete gamma function; inverted at a uniform draw.
  const double u = streams_[node].uniform01();
  const double x = boost::math::gamma_p_inv(1.0 / law_.shape, u);
  return weibull_scale_ * std::pow(x, 1.0 / law_.shape) / nodes_[node].rate_multiplier;
}

NodeFailure FailureTrace::next() {
  const Pending p = heap_.top();
  heap_.pop();
  NodeFailure f{p.at_s, p.node, &causes_->pick(streams_[p.node].uniform01())};
  heap_.push({p.at_s + draw_gap(p.node), p.node});
  return f;
}

}  // namespace orch::sim
