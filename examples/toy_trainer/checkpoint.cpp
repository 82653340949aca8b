#include "examples/toy_trainer/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace toy {
namespace fs = std::filesystem;

std::uint64_t fnv1a64(const unsigned char* data, std::size_t n, std::uint64_t h) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

void put_u64(std::vector<unsigned char>& buf, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) buf.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

void write_all(int fd, const unsigned char* p, std::size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write", path);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

std::string save_checkpoint(const std::string& dir, std::int64_t step, int dim,
                            const std::vector<float>& weights) {
  fs::create_directories(dir);
  const std::string abs_dir = fs::absolute(fs::path(dir)).lexically_normal().string();
  const std::string name = "step-" + std::to_string(step) + ".ckpt";
  std::string final_path = (fs::path(abs_dir) / name).string();
  const std::string tmp_path =
      (fs::path(abs_dir) / ("." + name + ".tmp." + std::to_string(::getpid()))).string();

  std::vector<unsigned char> buf(kMagic, kMagic + sizeof(kMagic));
  const std::size_t payload = weights.size() * sizeof(float);
  put_u64(buf, static_cast<std::uint64_t>(step));
  put_u64(buf, static_cast<std::uint64_t>(dim));
  put_u64(buf, payload);
  for (float f : weights) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    for (int i = 0; i < 4; ++i) buf.push_back(static_cast<unsigned char>(bits >> (8 * i)));
  }
  put_u64(buf, fnv1a64(buf.data(), buf.size()));

  int fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open", tmp_path);
  try {
    write_all(fd, buf.data(), buf.size(), tmp_path);
    if (::fsync(fd) != 0) fail("fsync", tmp_path);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp_path.c_str());
    throw;
  }
  if (::close(fd) != 0) fail("close", tmp_path);
  if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) {
    int saved = errno;
    ::unlink(tmp_path.c_str());
    errno = saved;
    fail("rename to", final_path);
  }
  int dfd = ::open(abs_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail("open dir", abs_dir);
  if (::fsync(dfd) != 0) {
    ::close(dfd);
    fail("fsync dir", abs_dir);
  }
  ::close(dfd);
  return final_path;
}

bool load_checkpoint(const std::string& path, int dim, Loaded& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open checkpoint " + path + ": " + std::strerror(errno);
    return false;
  }
  std::vector<unsigned char> buf((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
  const auto bad = [&](const std::string& why) {
    error = "corrupt or incompatible checkpoint " + path + ": " + why;
    return false;
  };
  if (buf.size() < kHeaderBytes + kTrailerBytes) {
    return bad("file is " + std::to_string(buf.size()) + " bytes, shorter than header+checksum");
  }
  if (std::memcmp(buf.data(), kMagic, sizeof(kMagic)) != 0) return bad("bad magic (not ORCHTOY1)");
  const std::uint64_t step = get_u64(&buf[8]);
  const std::uint64_t file_dim = get_u64(&buf[16]);
  const std::uint64_t len = get_u64(&buf[24]);
  const std::uint64_t want_len = static_cast<std::uint64_t>(dim) * dim * sizeof(float);
  if (file_dim != static_cast<std::uint64_t>(dim)) {
    return bad("dim is " + std::to_string(file_dim) + " but --dim is " + std::to_string(dim));
  }
  if (len != want_len) {
    return bad("payload length " + std::to_string(len) + " != " + std::to_string(want_len));
  }
  if (buf.size() != kHeaderBytes + len + kTrailerBytes) {
    return bad("file is " + std::to_string(buf.size()) + " bytes, expected " +
               std::to_string(kHeaderBytes + len + kTrailerBytes) + " (truncated?)");
  }
  const std::size_t body = kHeaderBytes + static_cast<std::size_t>(len);
  const std::uint64_t want = get_u64(&buf[body]);
  const std::uint64_t got = fnv1a64(buf.data(), body);
  if (want != got) return bad("checksum mismatch");
  if (step > static_cast<std::uint64_t>(INT64_MAX)) return bad("step out of range");

  out.step = static_cast<std::int64_t>(step);
  out.weights.resize(static_cast<std::size_t>(dim) * dim);
  for (std::size_t i = 0; i < out.weights.size(); ++i) {
    std::uint32_t bits = 0;
    for (int b = 3; b >= 0; --b) bits = (bits << 8) | buf[kHeaderBytes + 4 * i + b];
    std::memcpy(&out.weights[i], &bits, sizeof bits);
  }
  return true;
}

void prune_checkpoints(const std::string& dir, int keep) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() <= 10 || n.rfind("step-", 0) != 0 || n.substr(n.size() - 5) != ".ckpt") continue;
    const std::string digits = n.substr(5, n.size() - 10);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::stoll(digits), e.path());
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = static_cast<std::size_t>(std::max(keep, 0)); i < found.size(); ++i) {
    fs::remove(found[i].second, ec);  // best effort: a stale extra file is harmless
  }
}

}  // namespace toy
