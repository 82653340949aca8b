#pragma once
// Delivers the notices of the state database (migration 17) to the clusters file's webhooks,
// on a thread of its own: never from the brain's transaction, never holding it up. Each webhook
// has a cursor, the last notice it has been told of or skipped, kept in <state>/webhooks.db:
// a notice is passed only when the receiver answered 2xx, so a receiver that is down loses
// nothing; it is retried with backoff (1 s, doubling, at most max_backoff) and in order.
// A crash between the answer and the cursor's write repeats that one delivery (same
// X-Orchestrate-Delivery id). A new webhook starts at the newest notice.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "scheduler/runtime/worker_loop.h"
#include "scheduler/spec/cluster_spec.h"
#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store_reader.h"

namespace orch {

struct WebhookOptions {
  std::chrono::milliseconds first_backoff{1000};
  std::chrono::milliseconds max_backoff{300000};
  int timeout_ms = 10000;                    // one POST
  std::chrono::milliseconds interval{1000};  // how often the feed is read when nothing wakes it
};

class WebhookWorker {
 public:
  // secrets: each hook's signing key by name (read by the caller at start). Fails when the
  // cursor file cannot be opened.
  static Result<std::unique_ptr<WebhookWorker>> open(std::vector<WebhookSpec> hooks,
                                                     std::map<std::string, std::string> secrets,
                                                     std::unique_ptr<StoreReader> reader,
                                                     const std::string& cursor_db,
                                                     WebhookOptions options = {});
  ~WebhookWorker();
  WebhookWorker(const WebhookWorker&) = delete;
  WebhookWorker& operator=(const WebhookWorker&) = delete;

  void start();
  void stop();
  void wake();
  // One round: every hook that is due gets its pending notices, in order, until one fails.
  void run_once();

 private:
  struct Hook {
    WebhookSpec spec;
    std::string secret;
    std::int64_t cursor = 0;
    std::chrono::steady_clock::time_point next_try{};
    std::chrono::milliseconds backoff{0};
    int failures = 0;  // of the notice after the cursor
  };
  WebhookWorker(std::vector<Hook> hooks, std::unique_ptr<StoreReader> reader, Db cursors,
                WebhookOptions options);
  void deliver_due(Hook& hook);
  // true when the receiver took it (2xx); why otherwise.
  bool post(const Hook& hook, const NoticeRow& notice, const std::string& event,
            const std::string& excerpt, std::string& why);
  void save_cursor(const Hook& hook);

  std::vector<Hook> hooks_;
  std::unique_ptr<StoreReader> reader_;
  Db cursors_;
  WebhookOptions options_;
  WorkerLoop loop_;
};

}  // namespace orch
