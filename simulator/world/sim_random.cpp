// Deterministic random numbers for the simulator (sim_random.h).
#include "simulator/world/sim_random.h"

#include <cmath>

namespace orch::sim {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

SimRandom::SimRandom(std::uint64_t seed, std::uint64_t stream) {
  // Seed and stream mixed apart, so that (seed, stream + 1) is not (seed + 1, stream).
  std::uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
  for (auto& word : s_) word = splitmix64(x);
}

std::uint64_t SimRandom::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double SimRandom::uniform01() {
  // The top 53 bits, offset by half a step: in (0, 1), symmetric, never 0 or 1.
  return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

double SimRandom::exponential(double mean) {
  return -mean * std::log(uniform01());
}

double SimRandom::weibull(double shape, double scale) {
  return scale * std::pow(-std::log(uniform01()), 1.0 / shape);
}

}  // namespace orch::sim
