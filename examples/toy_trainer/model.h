#pragma once
// The toy model: one d x d weight matrix W learning a fixed linear map T by SGD on MSE.
// Every step draws its batch from an RNG seeded by the step number (and, in a multi-rank run, the
// rank: each rank has its own shard), so a run resumed from a checkpoint at step S computes
// exactly what an uninterrupted run computes from step S+1 on.

#include <cstdint>
#include <vector>

namespace toy {

// splitmix64: tiny, portable, and the same on every platform (unlike std:: distributions).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  float uniform();  // in [-1, 1)

 private:
  std::uint64_t state_;
};

class Model {
 public:
  Model(int dim, int batch, float lr);

  // One SGD step on the batch of `step`; returns the loss before the update.
  // Same as compute_gradient(step, 0) then apply_gradient(1).
  double train_step(std::int64_t step);

  // The gradient of the loss on the batch of `step` drawn for `shard` (a rank; shard 0 is the
  // batch a single-rank run draws) into gradient(); returns the loss. W is left as it is.
  double compute_gradient(std::int64_t step, int shard);
  // W -= lr * (gradient() * scale); scale 1 for one rank, 1/world after an all-reduce's sum.
  void apply_gradient(float scale);
  std::vector<float>& gradient() { return dw_; }

  int dim() const { return dim_; }
  std::vector<float>& weights() { return w_; }
  const std::vector<float>& weights() const { return w_; }

  // Model FLOPs per token of one step, the usual 6N with N = d*d parameters. Here it is also
  // the work actually done: X.W (2d^2), the target X.T (2d^2) and dW = X^T.dY (2d^2).
  double flops_per_token() const { return 6.0 * dim_ * dim_; }

 private:
  int dim_;
  int batch_;
  float lr_;
  std::vector<float> w_;       // d x d, row-major, the trained weights
  std::vector<float> target_;  // d x d, the fixed map to learn
  std::vector<float> x_, y_, yt_, dw_;
};

}  // namespace toy
