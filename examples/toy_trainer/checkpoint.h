#pragma once
// The toy trainer's checkpoint file, little-endian:
//
//   offset 0   8 bytes  magic "ORCHTOY1"
//   offset 8   u64      step
//   offset 16  u64      dim
//   offset 24  u64      payload length in bytes (= dim * dim * 4)
//   offset 32  payload  dim*dim float32 weights, row-major
//   end - 8    u64      FNV-1a 64 over header + payload
//
// Saves are atomic: a temp file in the same directory, fsync, rename, fsync of the directory.

#include <cstdint>
#include <string>
#include <vector>

namespace toy {

inline constexpr char kMagic[8] = {'O', 'R', 'C', 'H', 'T', 'O', 'Y', '1'};
inline constexpr std::size_t kHeaderBytes = 32;
inline constexpr std::size_t kTrailerBytes = 8;

std::uint64_t fnv1a64(const unsigned char* data, std::size_t n,
                      std::uint64_t h = 0xcbf29ce484222325ull);

struct Loaded {
  std::int64_t step = 0;
  std::vector<float> weights;
};

// Writes DIR/step-<step>.ckpt atomically and returns its absolute path. Throws
// std::runtime_error with the failing call and errno text.
std::string save_checkpoint(const std::string& dir, std::int64_t step, int dim,
                            const std::vector<float>& weights);

// Reads and verifies a checkpoint for a model of `dim`. On any problem (unreadable, wrong
// magic, dim, length, truncated, checksum) returns false and sets `error`.
bool load_checkpoint(const std::string& path, int dim, Loaded& out, std::string& error);

// Deletes all but the newest `keep` step-<S>.ckpt files in dir (by step number).
void prune_checkpoints(const std::string& dir, int keep);

}  // namespace toy
