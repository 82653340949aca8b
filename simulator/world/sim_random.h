#pragma once
// The simulator's random numbers: the same seed gives the same numbers, bit for bit, on every
// build (the standard library's distributions are implementation-defined, so none is used).
// xoshiro256** (Blackman and Vigna), seeded through splitmix64; a stream per purpose and index
// (a node's failures, say), so that what one stream draws never shifts another's: two policies
// run over the same seed see the same failures whatever they do.

#include <cstdint>

namespace orch::sim {

class SimRandom {
 public:
  // The stream `stream` of `seed` (e.g. one per node).
  SimRandom(std::uint64_t seed, std::uint64_t stream);

  std::uint64_t next_u64();
  // Uniform in (0, 1): never 0, so that its logarithm is finite.
  double uniform01();
  // Exponential with this mean (> 0).
  double exponential(double mean);
  // Weibull with this shape (> 0) and scale (> 0): scale * (-ln U)^(1/shape).
  double weibull(double shape, double scale);

 private:
  std::uint64_t s_[4];
};

}  // namespace orch::sim
