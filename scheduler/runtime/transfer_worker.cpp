#include "scheduler/runtime/transfer_worker.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "scheduler/data/throttle.h"

namespace orch {

struct TransferWorker::Copy {
  int tries_at_start = 0;  // the row's tries when this copy started
  std::thread thread;
  std::atomic<bool> done{false};
  std::atomic<bool> stop{false};
};

class TransferWorker::Control final : public TransferControl {
 public:
  Control(TransferWorker& worker, std::int64_t id, Copy& copy)
      : worker_(worker), id_(id), copy_(copy) {}

  void progress(const TransferProgress& p) override {
    const auto now = std::chrono::steady_clock::now();
    // The first report marks the copy running; then at most two a second.
    if (reported_ && now - last_ < std::chrono::milliseconds(500)) return;
    reported_ = true;
    last_ = now;
    worker_.post_(TransferProgressed{id_, p});
  }
  double cap_bytes_per_s() override { return worker_.cap_of(id_); }
  bool stop_requested() override { return copy_.stop.load(); }

  void started(const std::string& route) {
    TransferProgress p;
    p.route = route;
    progress(p);
  }

 private:
  TransferWorker& worker_;
  std::int64_t id_;
  Copy& copy_;
  bool reported_ = false;
  std::chrono::steady_clock::time_point last_{};
};

TransferWorker::TransferWorker(const std::vector<ClusterSpec>& clusters, TransferPort& port,
                               std::unique_ptr<StoreReader> reader, Post post, const Clock& clock,
                               int max_parallel)
    : clusters_(clusters),
      port_(port),
      reader_(std::move(reader)),
      post_(std::move(post)),
      clock_(clock),
      max_parallel_(max_parallel) {}

TransferWorker::~TransferWorker() {
  stop();
}

void TransferWorker::start() {
  loop_.start([this] { run_once(); }, std::chrono::milliseconds(500));
}

void TransferWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [id, copy] : copies_) copy->stop = true;
  }
  loop_.stop();
  std::map<std::int64_t, std::unique_ptr<Copy>> copies;
  {
    std::lock_guard<std::mutex> lock(mu_);
    copies.swap(copies_);
  }
  for (auto& [id, copy] : copies) {
    if (copy->thread.joinable()) copy->thread.join();
  }
}

void TransferWorker::wake() {
  loop_.wake();
}

int TransferWorker::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(copies_.size());
}

double TransferWorker::cap_of(std::int64_t transfer_id) {
  std::lock_guard<std::mutex> lock(reader_mu_);
  auto t = reader_->transfer(transfer_id);
  if (!t || !*t) return 0;
  return (*t)->cap_bps;
}

bool TransferWorker::windows_open(const TransferRow& t, Millis now) const {
  if (t.checkpoint_id) return true;  // checkpoints are never held back, only throttled
  for (const std::string& name : {t.src_cluster, t.dst_cluster}) {
    const ClusterSpec* c = clusters_.find(name);
    if (c && !in_windows(c->data.windows, now)) return false;
  }
  return true;
}

void TransferWorker::reap() {
  for (auto it = copies_.begin(); it != copies_.end();) {
    if (!it->second->done) {
      ++it;
      continue;
    }
    if (it->second->thread.joinable()) it->second->thread.join();
    finished_[it->first] = it->second->tries_at_start;
    it = copies_.erase(it);
  }
}

void TransferWorker::run_once() {
  std::vector<TransferRow> rows;
  {
    std::lock_guard<std::mutex> lock(reader_mu_);
    auto active = reader_->transfers(true, 1000);
    if (!active) return;  // a busy database: next round
    rows = std::move(*active);
  }
  const Millis now = clock_.now_ms();
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  reap();
  // Rows no longer active (done, failed, cancelled) need no memory of their last copy.
  std::erase_if(finished_, [&](const auto& entry) {
    return std::none_of(rows.begin(), rows.end(),
                        [&](const TransferRow& t) { return t.id == entry.first; });
  });
  // Oldest first.
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const TransferRow& t = *it;
    if (auto f = finished_.find(t.id); f != finished_.end()) {
      // Ended and posted, but the brain has not handled it yet: the row still says running, or
      // has not even counted the try (a fast copy whose first report is still queued).
      if (t.state == TransferState::running || t.tries == f->second) continue;
      finished_.erase(f);
    }
    if (copies_.count(t.id) != 0) continue;
    if (t.state == TransferState::verifying) continue;
    if (t.state == TransferState::queued && t.next_try_ms && *t.next_try_ms > now) continue;
    if (static_cast<int>(copies_.size()) >= max_parallel_) break;
    if (!windows_open(t, now)) continue;

    TransferRequest request;
    request.id = t.id;
    request.from = {t.src_cluster, t.src_path};
    request.to = {t.dst_cluster, t.dst_path};
    request.directory = t.directory;
    request.bytes_hint = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.bytes_total));
    request.checksum = t.tries > 0;  // a retry compares checksums: a same-size bad file is redone
    auto copy = std::make_unique<Copy>();
    copy->tries_at_start = t.tries;
    Copy* raw = copy.get();
    copies_[t.id] = std::move(copy);
    raw->thread = std::thread([this, raw, request] {
      Control control(*this, request.id, *raw);
      control.started("");
      auto result = port_.run(request, control);
      post_(TransferFinished{request.id, std::move(result)});
      raw->done = true;
      wake();
    });
  }
}

}  // namespace orch
