#pragma once
// Read connections to the state database, shared by the threads that answer requests. WAL lets
// any number of readers work beside the brain's writer, so each request leases a connection of
// its own instead of queueing behind one: the pool opens connections as concurrent requests need
// them, up to `max`, and a request past that waits for one to come back.

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "scheduler/store/store_reader.h"

namespace orch {

class ReaderPool {
 public:
  using Opener = std::function<Result<std::unique_ptr<StoreReader>>()>;

  // Opens connections with `open` as needed, at most max at a time.
  ReaderPool(Opener open, std::size_t max);
  // A pool of exactly this one connection (tests, or a database only one connection can see).
  explicit ReaderPool(std::unique_ptr<StoreReader> only);
  ReaderPool(const ReaderPool&) = delete;
  ReaderPool& operator=(const ReaderPool&) = delete;

  // A connection for the caller alone until the lease is destroyed.
  class Lease {
   public:
    Lease(ReaderPool& pool, std::unique_ptr<StoreReader> store)
        : pool_(&pool), store_(std::move(store)) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    StoreReader& operator*() const { return *store_; }
    StoreReader* operator->() const { return store_.get(); }

   private:
    ReaderPool* pool_;
    std::unique_ptr<StoreReader> store_;
  };

  Result<Lease> lease();
  std::size_t opened() const;

 private:
  void give_back(std::unique_ptr<StoreReader> store);

  Opener open_;
  const std::size_t max_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<StoreReader>> idle_;
  std::size_t opened_ = 0;
};

}  // namespace orch
