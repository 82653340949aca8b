// See push_sender.h. The thread holds the shared state too, so that when it cannot be joined in
// time (a name lookup that hangs) it is detached and the agent still exits on time.
#include "agents/push_sender.h"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

#include "agents/agent_clock.h"
#include "agents/json_writer.h"
#include "agents/push_client.h"
#include "agents/push_queue.h"
#include "scheduler/common/percent_encoding.h"

namespace orch::agent {
namespace {

constexpr std::int64_t kRequestMs = 10'000;  // one request, connect to answer
constexpr std::int64_t kAbortGraceMs = 500;  // after an abort: a poll slice and the cleanup

std::string env(const char* name) {
  const char* v = getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

struct PushSender::Shared {
  PushConfig config;
  PushClient client;
  std::string target;    // /api/v1/attempts/{token}/records
  std::string envelope;  // {"rank":R,"node":"N","records":
  std::mutex mutex;      // guards everything below
  std::condition_variable cv;
  PushQueue queue;
  std::mt19937 random{std::random_device{}()};
  bool finishing = false;
  bool done = false;
  bool warned_drop = false;
  std::atomic<bool> abort{false};
  std::thread thread;

  Shared(const PushConfig& c)
      : config(c), queue(PushQueueOptions{.every_ms = c.every_ms}, [this] {
          return std::uniform_real_distribution<double>(0, 1)(random);
        }) {}

  // A line on stderr, with the credential cut out should the server have echoed it.
  void say(std::string message) const {
    for (size_t at; !config.credential.empty() &&
                    (at = message.find(config.credential)) != std::string::npos;) {
      message.replace(at, config.credential.size(), "<credential>");
    }
    std::fprintf(stderr, "orchestrate-agent: push: %s\n", message.c_str());
  }

  void loop() {
    std::unique_lock lock(mutex);
    while (!queue.stopped() && !(finishing && queue.empty()) && !abort.load()) {
      const std::int64_t now = steady_ms();
      const std::int64_t wait = queue.next_due_in(now);
      if (wait != 0) {
        if (wait < 0) {
          cv.wait(lock);
        } else {
          cv.wait_for(lock, std::chrono::milliseconds(wait));
        }
        continue;
      }
      const auto batch = queue.take_batch(now);
      const std::string body = envelope + batch->records_json + "}";
      lock.unlock();
      const PushAnswer answer =
          client.post(target, config.credential, body, steady_ms() + kRequestMs, &abort);
      lock.lock();
      if (const std::string message = queue.on_answer(answer, steady_ms()); !message.empty()) {
        say(message);
      }
    }
    done = true;
    cv.notify_all();
  }
};

bool read_push_config(const std::string& flag_url, std::int64_t every_ms, PushConfig* config,
                      bool* enabled, std::string* error) {
  config->url = flag_url.empty() ? env("ORCH_PUSH_URL") : flag_url;
  config->credential = env("ORCH_PUSH_CREDENTIAL");
  config->ca_pem = env("ORCH_PUSH_CA");
  config->token = env("ORCH_LAUNCH_TOKEN");
  config->every_ms = every_ms;
  // The job inherits our environment; the credential is the agent's alone.
  unsetenv("ORCH_PUSH_CREDENTIAL");
  *enabled = !config->url.empty() && !config->credential.empty();
  if (config->url.empty() && config->credential.empty()) return true;
  if (config->url.empty()) {
    *error = "ORCH_PUSH_CREDENTIAL is set but no push URL (--push-url or ORCH_PUSH_URL)";
    return false;
  }
  if (config->credential.empty()) {
    *error = "the push URL " + config->url + " is set but ORCH_PUSH_CREDENTIAL is not";
    return false;
  }
  if (config->token.empty()) {
    *error = "pushing records home needs ORCH_LAUNCH_TOKEN (the attempt's launch token)";
    return false;
  }
  PushUrl url;
  return parse_push_url(config->url, &url, error);
}

PushSender::PushSender(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

std::unique_ptr<PushSender> PushSender::create(const PushConfig& config, int rank,
                                               const std::string& node, std::string* error) {
  PushUrl url;
  if (!parse_push_url(config.url, &url, error)) return nullptr;
  auto shared = std::make_shared<Shared>(config);
  if (!shared->client.init(url, config.ca_pem, error)) return nullptr;
  shared->target = "/api/v1/attempts/" + percent_encode(config.token) + "/records";
  shared->envelope =
      "{\"rank\":" + std::to_string(rank) + ",\"node\":" + json_quote(node) + ",\"records\":";
  return std::unique_ptr<PushSender>(new PushSender(std::move(shared)));
}

PushSender::~PushSender() {
  stop_thread(0);
}

void PushSender::start() {
  if (started_) return;
  started_ = true;
  // Signals stay the poll loop's (its self-pipe and forwarding): the thread blocks them all.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  // The thread keeps the state alive should it outlive this object (detached).
  shared_->thread = std::thread([s = shared_] { s->loop(); });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

void PushSender::add(const std::string& line) {
  const std::lock_guard lock(shared_->mutex);
  shared_->queue.add(line, steady_ms());
  if (shared_->queue.dropped() > 0 && !shared_->warned_drop) {
    shared_->warned_drop = true;
    shared_->say("more than 4096 records wait for the server: dropping the oldest heartbeats");
  }
  shared_->cv.notify_all();
}

void PushSender::finish() {
  {
    const std::lock_guard lock(shared_->mutex);
    shared_->finishing = true;
    shared_->queue.hurry(steady_ms());
    shared_->cv.notify_all();
  }
  stop_thread(shared_->config.exit_wait_ms);
}

void PushSender::stop_thread(std::int64_t wait_ms) {
  if (!started_ || !shared_->thread.joinable()) return;
  Shared& s = *shared_;
  std::unique_lock lock(s.mutex);
  const auto finished = [&s] { return s.done; };
  if (!s.cv.wait_for(lock, std::chrono::milliseconds(wait_ms), finished)) {
    if (!s.queue.empty() && !s.queue.stopped()) {
      s.say("gave up on " + std::to_string(s.queue.size()) +
            " record(s) the server did not take in time; the event file keeps them");
    }
    s.abort = true;
    s.cv.notify_all();
    s.cv.wait_for(lock, std::chrono::milliseconds(kAbortGraceMs), finished);
  }
  const bool joinable = s.done;
  lock.unlock();
  if (joinable) {
    s.thread.join();
  } else {
    s.thread.detach();  // stuck in a name lookup: it holds its own reference to the state
  }
}

}  // namespace orch::agent
