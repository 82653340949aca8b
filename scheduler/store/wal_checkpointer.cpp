// The writer's WAL checkpoints on a thread of their own (wal_checkpointer.h).
#include "scheduler/store/wal_checkpointer.h"

#include <sqlite3.h>

#include <chrono>
#include <iostream>

namespace orch {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::start(Store& writer,
                                                                const std::string& path,
                                                                Options options) {
  auto own = Db::open(path);
  if (!own) return own.error();
  // As the writer: the database file is synced at each checkpoint, not the WAL at each commit.
  if (auto r = own->exec("PRAGMA synchronous=NORMAL"); !r) return r.error();
  return std::unique_ptr<WalCheckpointer>(new WalCheckpointer(writer, std::move(*own), options));
}

WalCheckpointer::WalCheckpointer(Store& writer, Db own, Options options)
    : writer_(writer.db().raw()), own_(std::move(own)), options_(options) {
  thread_ = std::thread([this] { run(); });
  // Replaces SQLite's own hook, the one that checkpoints on the committing thread.
  sqlite3_wal_hook(writer_, &WalCheckpointer::on_commit, this);
}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_autocheckpoint(writer_, 1000);  // SQLite's default hook again
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

int WalCheckpointer::on_commit(void* self, sqlite3* db, const char* name, int frames) {
  auto* c = static_cast<WalCheckpointer*>(self);
  if (frames >= c->options_.inline_frames) {
    // The thread is far behind (or a reader holds the WAL): do as SQLite would have. Most of
    // the WAL is copied already, so this is short; busy means the thread is at it right now.
    if (sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr) ==
        SQLITE_OK) {
      std::lock_guard<std::mutex> lock(c->mu_);
      ++c->inline_checkpoints_;
    }
    return SQLITE_OK;
  }
  if (frames >= c->options_.start_frames) {
    {
      std::lock_guard<std::mutex> lock(c->mu_);
      c->due_ = true;
    }
    c->cv_.notify_all();
  }
  return SQLITE_OK;
}

void WalCheckpointer::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return due_ || stop_; });
    if (stop_) return;
    due_ = false;
    lock.unlock();
    // PASSIVE: copies what no reader still needs and never waits for the writer or a reader.
    int log = 0;
    int done = 0;
    const int rc =
        sqlite3_wal_checkpoint_v2(own_.raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      std::cerr << "orchestrate: checkpoint of the state database failed: "
                << sqlite3_errmsg(own_.raw()) << " (the writer checkpoints instead past "
                << options_.inline_frames << " pages)\n";
    }
    lock.lock();
    if (rc == SQLITE_OK) ++checkpoints_;
    cv_.notify_all();
  }
}

std::uint64_t WalCheckpointer::checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_;
}

std::uint64_t WalCheckpointer::inline_checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return inline_checkpoints_;
}

bool WalCheckpointer::wait_for_checkpoints(std::uint64_t n, int timeout_ms) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return checkpoints_ >= n; });
}

}  // namespace orch
