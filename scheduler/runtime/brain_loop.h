#pragma once
// The brain's thread. Events arrive from any thread (REST handlers, site workers, the timer)
// into one queue; the loop hands them to the Brain one at a time, so every decision is made on
// this thread in one transaction. After each event the site workers are woken to look at the
// outbox. Commands (submit, cancel) wait for their reply through call().

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "scheduler/brain/brain.h"
#include "scheduler/runtime/event_timing.h"

namespace orch {

class BrainLoop {
 public:
  // on_outbox: called (on the brain thread) after each event that wrote actions or transfers.
  BrainLoop(Brain& brain, int tick_ms, std::function<void()> on_outbox);
  ~BrainLoop();
  BrainLoop(const BrainLoop&) = delete;
  BrainLoop& operator=(const BrainLoop&) = delete;

  void start();
  void stop();  // finishes the event in hand, drops the rest (they are re-derived on restart)

  void post(BrainEvent event);
  // Blocks until the brain has handled the event, or at most `wait`; returns its reply. When the
  // wait runs out the event stays queued and will still be handled: the caller gets
  // ErrorKind::unreachable saying so (a REST thread is never held longer than this).
  Result<BrainReply> call(BrainEvent event,
                          std::chrono::milliseconds wait = std::chrono::seconds(10));
  // Events waiting for the brain (for the server's health answer and tests).
  std::size_t queued() const;
  // How long the brain took over each event (ticks included), for /metrics.
  DurationHistogram::Snapshot event_times() const { return event_times_.snapshot(); }

 private:
  struct Item {
    BrainEvent event;
    // Shared with the caller, who may have stopped waiting before the reply is set.
    std::shared_ptr<std::promise<Result<BrainReply>>> reply;
  };
  void run();

  Brain& brain_;
  const int tick_ms_;
  std::function<void()> on_outbox_;
  DurationHistogram event_times_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  std::uint64_t last_work_epoch_ = 0;  // the brain's work epoch after the last event
  std::thread thread_;
};

}  // namespace orch
