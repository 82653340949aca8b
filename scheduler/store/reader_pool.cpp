#include "scheduler/store/reader_pool.h"

namespace orch {

ReaderPool::ReaderPool(Opener open, std::size_t max) : open_(std::move(open)), max_(max) {}

ReaderPool::ReaderPool(std::unique_ptr<StoreReader> only) : max_(1), opened_(1) {
  idle_.push_back(std::move(only));
}

ReaderPool::Lease::~Lease() {
  if (store_) pool_->give_back(std::move(store_));
}

Result<ReaderPool::Lease> ReaderPool::lease() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!idle_.empty()) {
      auto store = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(store));
    }
    if (open_ && opened_ < max_) break;
    cv_.wait(lock);
  }
  ++opened_;  // counted before opening, so concurrent callers never open more than max
  lock.unlock();
  auto store = open_();
  if (!store) {
    lock.lock();
    --opened_;
    cv_.notify_one();
    return store.error();
  }
  return Lease(*this, std::move(*store));
}

std::size_t ReaderPool::opened() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opened_;
}

void ReaderPool::give_back(std::unique_ptr<StoreReader> store) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(store));
  }
  cv_.notify_one();
}

}  // namespace orch
