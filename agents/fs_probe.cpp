// See fs_probe.h.
#include "agents/fs_probe.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "agents/agent_clock.h"

namespace orch::agent {
namespace {

constexpr std::int64_t kBlock = 4096;
constexpr std::int64_t kChunk = 1 << 20;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Fills buf with bytes that do not compress (a filesystem that compresses zeros would report a
// write speed no checkpoint sees).
void fill_pattern(unsigned char* buf, size_t n) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = static_cast<unsigned char>(x);
  }
}

// The chunk number goes into its first bytes, so a device that returns the wrong block is caught.
void stamp(unsigned char* buf, std::int64_t chunk_no) {
  std::memcpy(buf, &chunk_no, sizeof chunk_no);
}

std::string errno_text(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

bool write_all(int fd, const unsigned char* p, size_t n, int* err) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    if (w == 0) {
      *err = ENOSPC;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Returns bytes read (short only at end of file), or -1 with *err.
ssize_t read_full(int fd, unsigned char* p, size_t n, int* err) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return -1;
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

// One write-then-read pass. Returns false with probe->error set; *retry_buffered is set when
// O_DIRECT was refused mid-way (some filesystems accept the flag at open and fail the write).
bool write_read(const std::string& path, bool direct, std::int64_t bytes, unsigned char* pattern,
                unsigned char* readbuf, FsProbe* probe, bool* retry_buffered) {
  int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? O_DIRECT : 0);
  int fd = open(path.c_str(), flags, 0600);
  if (fd < 0) {
    if (direct && errno == EINVAL) {
      *retry_buffered = true;
      return false;
    }
    probe->error = errno_text("create " + path, errno);
    return false;
  }
  int err = 0;
  double t0 = steady_seconds();
  for (std::int64_t off = 0, no = 0; off < bytes; off += kChunk, ++no) {
    size_t n = static_cast<size_t>(std::min(kChunk, bytes - off));
    stamp(pattern, no);
    if (!write_all(fd, pattern, n, &err)) {
      close(fd);
      if (direct && err == EINVAL) {
        *retry_buffered = true;
        return false;
      }
      probe->error = errno_text("write " + path, err);
      return false;
    }
  }
  if (fsync(fd) != 0) {
    err = errno;
    close(fd);
    probe->error = errno_text("fsync " + path, err);
    return false;
  }
  double write_s = steady_seconds() - t0;
  // The data is on the device now, so its cached pages are clean and the kernel can drop them:
  // the read below then measures the filesystem, not memory.
  if (!direct) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);

  fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    probe->error = errno_text("open " + path + " to read it back", errno);
    return false;
  }
  if (!direct) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  t0 = steady_seconds();
  for (std::int64_t off = 0, no = 0; off < bytes; off += kChunk, ++no) {
    size_t n = static_cast<size_t>(std::min(kChunk, bytes - off));
    ssize_t got = read_full(fd, readbuf, n, &err);
    if (got < 0) {
      close(fd);
      probe->error = errno_text("read " + path, err);
      return false;
    }
    stamp(pattern, no);
    if (static_cast<size_t>(got) != n || std::memcmp(readbuf, pattern, n) != 0) {
      close(fd);
      probe->error = "read back of " + path + " differs from what was written at byte " +
                     std::to_string(off) + " (data corruption)";
      return false;
    }
  }
  double read_s = steady_seconds() - t0;
  close(fd);
  auto rate = [&](double s) { return static_cast<double>(bytes) / 1e6 / std::max(s, 1e-6); };
  probe->write_mb_s = rate(write_s);
  probe->read_mb_s = rate(read_s);
  probe->direct = direct;
  return true;
}

}  // namespace

FsProbe probe_filesystem(const std::string& dir, std::int64_t bytes) {
  FsProbe probe;
  probe.dir = dir;
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) == 0) {
    probe.free_bytes =
        static_cast<std::int64_t>(vfs.f_bavail) * static_cast<std::int64_t>(vfs.f_frsize);
  } else {
    probe.free_error = errno_text("statvfs " + dir, errno);
  }
  if (bytes <= 0) return probe;
  probe.bytes = (bytes + kBlock - 1) / kBlock * kBlock;

  void* raw_pattern = nullptr;
  void* raw_read = nullptr;
  if (posix_memalign(&raw_pattern, kBlock, kChunk) != 0 ||
      posix_memalign(&raw_read, kBlock, kChunk) != 0) {
    std::free(raw_pattern);
    probe.error = "cannot allocate the I/O buffers";
    return probe;
  }
  std::unique_ptr<unsigned char, FreeDeleter> pattern(static_cast<unsigned char*>(raw_pattern));
  std::unique_ptr<unsigned char, FreeDeleter> readbuf(static_cast<unsigned char*>(raw_read));
  fill_pattern(pattern.get(), kChunk);

  // mkstemp picks a name nobody else uses; the passes below reopen it by that name.
  std::string path = dir + "/.orchestrate-probe-XXXXXX";
  int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) {
    probe.error = errno_text("create a file in " + dir, errno);
    return probe;
  }
  close(fd);
  bool retry_buffered = false;
  if (!write_read(path, true, probe.bytes, pattern.get(), readbuf.get(), &probe, &retry_buffered) &&
      retry_buffered) {
    retry_buffered = false;
    write_read(path, false, probe.bytes, pattern.get(), readbuf.get(), &probe, &retry_buffered);
  }
  unlink(path.c_str());
  return probe;
}

std::string human_bytes(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

std::vector<Check> fs_checks(const FsProbe& probe, std::int64_t min_free_bytes) {
  std::vector<Check> out;
  if (probe.bytes > 0) {
    Check w{"fs-write", probe.error.empty(), probe.error};
    if (w.ok && probe.write_mb_s && probe.read_mb_s) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "wrote %s at %.1f MB/s, read it back at %.1f MB/s%s",
                    human_bytes(probe.bytes).c_str(), *probe.write_mb_s, *probe.read_mb_s,
                    probe.direct ? " (O_DIRECT)" : " (buffered, fsync)");
      w.detail = buf;
    }
    out.push_back(w);
  }
  Check f{"fs-free", true, ""};
  if (!probe.free_bytes) {
    f.ok = false;
    f.detail = probe.free_error;
  } else {
    f.ok = *probe.free_bytes >= min_free_bytes;
    f.detail = human_bytes(*probe.free_bytes) + " available in " + probe.dir + " (minimum " +
               human_bytes(min_free_bytes) + ")";
  }
  out.push_back(f);
  return out;
}

}  // namespace orch::agent
