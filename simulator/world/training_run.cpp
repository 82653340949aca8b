// A simulated training attempt's steps and saves over time (training_run.h).
#include "simulator/world/training_run.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace orch::sim {

Result<void> TrainingShape::check() const {
  if (!std::isfinite(step_s) || step_s <= 0) {
    return make_error(ErrorKind::invalid, "a step must take a number of seconds above 0, got " +
                                              std::to_string(step_s));
  }
  if (total_steps <= 0) {
    return make_error(ErrorKind::invalid,
                      "a job needs at least one step, got " + std::to_string(total_steps));
  }
  if (checkpoint_every < 0) {
    return make_error(ErrorKind::invalid, "checkpoint_every must be 0 (never) or more, got " +
                                              std::to_string(checkpoint_every));
  }
  if (!std::isfinite(save_s) || save_s < 0) {
    return make_error(ErrorKind::invalid,
                      "a save must take 0 seconds or more, got " + std::to_string(save_s));
  }
  return Ok{};
}

Result<double> gang_step_s(double flops_per_step, int gpus, double peak_flops_per_gpu, double mfu,
                           double slowest_node_speed) {
  const auto bad = [](const std::string& what, double x) {
    return make_error(ErrorKind::invalid, what + ", got " + std::to_string(x));
  };
  if (!std::isfinite(flops_per_step) || flops_per_step <= 0) {
    return bad("a step's FLOPs must be above 0", flops_per_step);
  }
  if (gpus <= 0) {
    return make_error(ErrorKind::invalid,
                      "a gang needs at least one GPU, got " + std::to_string(gpus));
  }
  if (!std::isfinite(peak_flops_per_gpu) || peak_flops_per_gpu <= 0) {
    return bad("a GPU's peak FLOP/s must be above 0", peak_flops_per_gpu);
  }
  if (!(mfu > 0 && mfu <= 1)) return bad("MFU must be above 0 and at most 1", mfu);
  if (!(slowest_node_speed > 0 && slowest_node_speed <= 1)) {
    return bad("a node's speed must be above 0 and at most 1 (nominal)", slowest_node_speed);
  }
  return flops_per_step / (gpus * peak_flops_per_gpu * mfu * slowest_node_speed);
}

TrainingProgress advance(const TrainingShape& shape, std::int64_t start_step, double start_s,
                         double until_s) {
  TrainingProgress p;
  p.step = std::clamp<std::int64_t>(start_step, 0, shape.total_steps);
  p.last_checkpoint = p.step;
  p.at_s = start_s;
  p.completed = p.step == shape.total_steps;
  if (p.completed) return p;
  const std::int64_t every = shape.checkpoint_every;
  for (;;) {
    // Train to the next save (a multiple of `every`) or to the end, whichever comes first.
    const std::int64_t next_save = every > 0 ? (p.step / every + 1) * every : shape.total_steps;
    const std::int64_t target = std::min(next_save, shape.total_steps);
    const double reached_s = p.at_s + static_cast<double>(target - p.step) * shape.step_s;
    if (reached_s > until_s) {
      // Stopped on the way: the whole steps made by then.
      const double steps = std::floor((until_s - p.at_s) / shape.step_s);
      p.step += std::clamp<std::int64_t>(static_cast<std::int64_t>(std::max(steps, 0.0)), 0,
                                         target - p.step);
      p.at_s = until_s;
      return p;
    }
    p.step = target;
    p.at_s = reached_s;
    if (p.step == shape.total_steps) {
      p.completed = true;
      return p;
    }
    if (p.at_s + shape.save_s > until_s) {  // the save is cut short: it does not count
      p.at_s = until_s;
      return p;
    }
    p.at_s += shape.save_s;
    p.last_checkpoint = p.step;
    ++p.saves;
    // Whole cycles of `every` steps and a save that end before until_s and before the last
    // step are skipped in one go (a month of a long job is thousands of them); the last one is
    // left to the loop, which decides the edges exactly as above.
    const double cycle_s = static_cast<double>(every) * shape.step_s + shape.save_s;
    const std::int64_t saves_left = (shape.total_steps - 1) / every - p.step / every;
    std::int64_t cycles = saves_left;
    if (std::isfinite(until_s)) {
      const double fit = std::floor((until_s - p.at_s) / cycle_s);
      if (fit < static_cast<double>(cycles)) cycles = static_cast<std::int64_t>(std::max(fit, 0.0));
    }
    if (cycles > 1) {
      p.step += (cycles - 1) * every;
      p.at_s += static_cast<double>(cycles - 1) * cycle_s;
      p.saves += cycles - 1;
      p.last_checkpoint = p.step;
    }
  }
}

}  // namespace orch::sim
