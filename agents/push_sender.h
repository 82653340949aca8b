#pragma once
// `run`'s records pushed home (issue 44): the PushQueue and the PushClient on a thread of their
// own, so the poll loop that relays the job's output only hands lines over (a lock and a
// notify) and never waits on the network. Pushing is on when a push URL (--push-url or
// ORCH_PUSH_URL) and ORCH_PUSH_CREDENTIAL are both set (agents/README.md, "Pushing records
// home").

#include <cstdint>
#include <memory>
#include <string>

namespace orch::agent {

struct PushConfig {
  std::string url;         // https://host:port[/prefix]
  std::string credential;  // the attempt's bearer credential; never printed
  std::string ca_pem;      // PEM text; "": the system store
  std::string token;       // the launch token: the attempt in the route
  std::int64_t every_ms = 1000;
  std::int64_t exit_wait_ms = 10'000;  // how long the agent tries to deliver what is left
};

// Reads ORCH_PUSH_URL (unless flag_url is set), ORCH_PUSH_CREDENTIAL, ORCH_PUSH_CA and
// ORCH_LAUNCH_TOKEN, and takes ORCH_PUSH_CREDENTIAL out of the environment the job inherits.
// Returns false with *error when pushing is asked for but cannot work (a URL that is not
// https://, no launch token, a URL without a credential or the other way round); *enabled says
// whether to push.
bool read_push_config(const std::string& flag_url, std::int64_t every_ms, PushConfig* config,
                      bool* enabled, std::string* error);

class PushSender {
 public:
  // Sets up TLS (the CA read) without starting the thread; nullptr with *error when it cannot.
  static std::unique_ptr<PushSender> create(const PushConfig& config, int rank,
                                            const std::string& node, std::string* error);
  ~PushSender();  // gives up at once on whatever is still queued
  PushSender(const PushSender&) = delete;
  PushSender& operator=(const PushSender&) = delete;

  void start();
  // Queues one event-file record; never blocks on the network.
  void add(const std::string& line);
  // Tries to deliver what is queued (retrying at once, then backing off) until it is all
  // acknowledged, pushing stopped, or exit_wait_ms passed; then stops the thread.
  void finish();

 private:
  struct Shared;
  explicit PushSender(std::shared_ptr<Shared> shared);
  void stop_thread(std::int64_t wait_ms);
  std::shared_ptr<Shared> shared_;
  bool started_ = false;
};

}  // namespace orch::agent
