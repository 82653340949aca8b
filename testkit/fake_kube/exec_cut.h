#pragma once
// A test's break of a pods/exec stream (`POST /fake/exec/cut?afterBytes=N`, issue 44): the
// first stream to carry more than N bytes (stdout sent plus stdin received) is cut after N
// bytes: its command is killed and the WebSocket closed without a Status, as when the API
// server or the kubelet goes away mid-copy. Once: later streams pass.

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace orch::fake_kube {

class ExecCut {
 public:
  void arm(std::int64_t after_bytes) { after_ = after_bytes; }
  void disarm() { after_ = -1; }
  // Of `n` more bytes of a stream that carried `carried`, how many pass; fewer than `n`: the
  // stream is to be cut after them (this stream took the cut).
  std::size_t allow(std::uint64_t carried, std::size_t n) {
    std::int64_t limit = after_.load();
    if (limit < 0 || carried + n <= static_cast<std::uint64_t>(limit)) return n;
    if (!after_.compare_exchange_strong(limit, -1)) return n;
    return carried >= static_cast<std::uint64_t>(limit)
               ? 0
               : static_cast<std::size_t>(static_cast<std::uint64_t>(limit) - carried);
  }

 private:
  std::atomic<std::int64_t> after_{-1};
};

}  // namespace orch::fake_kube
