#pragma once
// Moves the writer's WAL checkpoints to a thread of their own. SQLite checkpoints on the
// committing thread by default: every thousand pages, a commit of the brain also copies the WAL
// into the database file and syncs it, and the brain's next event waits for the disk. With this,
// a commit only tells the checkpointer that the WAL has grown; its thread, with a connection of
// its own, copies and syncs beside the brain (WAL mode allows a checkpoint while a writer
// appends). Should that thread fall far behind, the writer checkpoints itself, as SQLite would.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "scheduler/common/result.h"
#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"

namespace orch {

class WalCheckpointer {
 public:
  struct Options {
    int start_frames = 1000;   // a WAL this long (pages) is checkpointed by the thread
    int inline_frames = 8192;  // this long (32 MiB of 4 KiB pages), by the writer itself
  };

  // Takes over the checkpoints of writer, a connection to the file at path. Must be destroyed
  // before writer is: it gives writer back SQLite's own checkpoints on the committing thread.
  static Result<std::unique_ptr<WalCheckpointer>> start(Store& writer, const std::string& path,
                                                        Options options);
  static Result<std::unique_ptr<WalCheckpointer>> start(Store& writer, const std::string& path) {
    return start(writer, path, Options{});
  }
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;
  ~WalCheckpointer();

  // Checkpoints made so far by the thread and by the writer (the safety net).
  std::uint64_t checkpoints() const;
  std::uint64_t inline_checkpoints() const;
  // Waits up to timeout_ms until the thread has made at least n checkpoints (tests).
  bool wait_for_checkpoints(std::uint64_t n, int timeout_ms) const;

 private:
  WalCheckpointer(Store& writer, Db own, Options options);
  static int on_commit(void* self, sqlite3* db, const char* name, int frames);
  void run();

  sqlite3* writer_;
  Db own_;
  const Options options_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool due_ = false;
  bool stop_ = false;
  std::uint64_t checkpoints_ = 0;
  std::uint64_t inline_checkpoints_ = 0;
  std::thread thread_;
};

}  // namespace orch
