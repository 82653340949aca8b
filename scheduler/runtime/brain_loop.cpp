#include "scheduler/runtime/brain_loop.h"

#include <chrono>
#include <exception>
#include <iostream>

namespace orch {

BrainLoop::BrainLoop(Brain& brain, int tick_ms, std::function<void()> on_outbox)
    : brain_(brain), tick_ms_(tick_ms), on_outbox_(std::move(on_outbox)) {}

BrainLoop::~BrainLoop() {
  stop();
}

void BrainLoop::start() {
  thread_ = std::thread([this] { run(); });
}

void BrainLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& item : queue_) {
      if (item.reply) {
        item.reply->set_value(make_error(ErrorKind::unreachable, "server is shutting down"));
      }
    }
    queue_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BrainLoop::post(BrainEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push_back(Item{std::move(event), nullptr});
  }
  cv_.notify_one();
}

Result<BrainReply> BrainLoop::call(BrainEvent event, std::chrono::milliseconds wait) {
  auto promise = std::make_shared<std::promise<Result<BrainReply>>>();
  auto future = promise->get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return make_error(ErrorKind::unreachable, "server is shutting down");
    queue_.push_back(Item{std::move(event), promise});
  }
  cv_.notify_one();
  if (future.wait_for(wait) != std::future_status::ready) {
    return make_error(ErrorKind::unreachable,
                      "the scheduler did not answer within " + std::to_string(wait.count()) +
                          " ms; the request is queued and may still take effect (check before "
                          "retrying)");
  }
  return future.get();
}

std::size_t BrainLoop::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void BrainLoop::run() {
  using SteadyClock = std::chrono::steady_clock;
  auto next_tick = SteadyClock::now() + std::chrono::milliseconds(tick_ms_);
  for (;;) {
    Item item{Tick{}, nullptr};
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_until(lock, next_tick, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      // A tick is due: it goes first, so a steady stream of observations cannot starve it.
      if (SteadyClock::now() >= next_tick || queue_.empty()) {
        next_tick = SteadyClock::now() + std::chrono::milliseconds(tick_ms_);
      } else {
        item = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    Result<BrainReply> reply = make_error(ErrorKind::internal, "internal error");
    const auto began = SteadyClock::now();
    try {
      reply = brain_.handle(item.event);
    } catch (const std::exception& e) {
      // Brain::handle rolls back a throwing transaction itself; this catches what throws
      // outside it. One bad event must never take the control plane down.
      reply = make_error(ErrorKind::internal, std::string("internal error: ") + e.what());
    } catch (...) {
      reply = make_error(ErrorKind::internal, "internal error (unknown exception)");
    }
    event_times_.observe(std::chrono::duration<double>(SteadyClock::now() - began).count());
    if (!reply && !item.reply) {
      // Nobody waits for this answer (an observation or a tick): say so on the server's log.
      std::cerr << "orchestrate: brain: " << reply.error().message << "\n";
    }
    if (item.reply) item.reply->set_value(std::move(reply));
    // Wake the workers only for new work: a poll's observation that decided nothing must not
    // set off another poll at once (that loop kept a core busy with one running job).
    const std::uint64_t work = brain_.work_epoch();
    if (on_outbox_ && work != last_work_epoch_) on_outbox_();
    last_work_epoch_ = work;
  }
}

}  // namespace orch
