#include "examples/toy_trainer/model.h"

#include <algorithm>
#include <cmath>

namespace toy {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float Rng::uniform() {
  // 24 random bits -> [0, 1) exactly representable, then to [-1, 1).
  return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

Model::Model(int dim, int batch, float lr)
    : dim_(dim),
      batch_(batch),
      lr_(lr),
      w_(static_cast<std::size_t>(dim) * dim),
      target_(w_.size()),
      x_(static_cast<std::size_t>(batch) * dim),
      y_(x_.size()),
      yt_(x_.size()),
      dw_(w_.size()) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(dim));
  Rng init(0x5EED0001ull);
  for (auto& v : w_) v = init.uniform() * scale * 0.1f;
  Rng tgt(0x7A46E700ull);
  for (auto& v : target_) v = tgt.uniform() * scale;
}

namespace {

// out[b x d] = in[b x d] . m[d x d]; i-k-j order so the inner loop streams rows.
void matmul(const std::vector<float>& in, const std::vector<float>& m, std::vector<float>& out,
            int rows, int d) {
  std::fill(out.begin(), out.end(), 0.0f);
  for (int i = 0; i < rows; ++i) {
    float* o = &out[static_cast<std::size_t>(i) * d];
    const float* a = &in[static_cast<std::size_t>(i) * d];
    for (int k = 0; k < d; ++k) {
      const float aik = a[k];
      const float* mk = &m[static_cast<std::size_t>(k) * d];
      for (int j = 0; j < d; ++j) o[j] += aik * mk[j];
    }
  }
}

}  // namespace

double Model::train_step(std::int64_t step) {
  const double loss = compute_gradient(step, 0);
  apply_gradient(1.0f);
  return loss;
}

double Model::compute_gradient(std::int64_t step, int shard) {
  const int d = dim_;
  const int b = batch_;
  // Steps stay below 2^40, so every (step, shard) pair gets its own seed; shard 0's is the seed
  // a single-rank run has always used.
  Rng rng(0xB47C000000000000ull ^ static_cast<std::uint64_t>(step) ^
          (static_cast<std::uint64_t>(shard) << 40));
  for (auto& v : x_) v = rng.uniform();

  matmul(x_, w_, y_, b, d);        // forward: Y = X.W
  matmul(x_, target_, yt_, b, d);  // what Y should be: X.T

  // loss = (1/b) * sum over rows of |y - yt|^2; dY = (2/b) (Y - Yt), kept in y_.
  double loss = 0.0;
  const float g = 2.0f / static_cast<float>(b);
  for (std::size_t i = 0; i < y_.size(); ++i) {
    const float diff = y_[i] - yt_[i];
    loss += static_cast<double>(diff) * diff;
    y_[i] = g * diff;
  }
  loss /= b;

  // backward: dW = X^T . dY, accumulated row by row of the batch (cache-friendly).
  std::fill(dw_.begin(), dw_.end(), 0.0f);
  for (int r = 0; r < b; ++r) {
    const float* xr = &x_[static_cast<std::size_t>(r) * d];
    const float* dyr = &y_[static_cast<std::size_t>(r) * d];
    for (int k = 0; k < d; ++k) {
      const float xk = xr[k];
      float* dwk = &dw_[static_cast<std::size_t>(k) * d];
      for (int j = 0; j < d; ++j) dwk[j] += xk * dyr[j];
    }
  }
  return loss;
}

void Model::apply_gradient(float scale) {
  // scale 1 is exact (x * 1.0f == x), so one rank updates W exactly as it always did.
  for (std::size_t i = 0; i < w_.size(); ++i) w_[i] -= lr_ * (dw_[i] * scale);
}

}  // namespace toy
