#pragma once
// The records `run` pushes home (issue 44), as a queue with no I/O and no clock of its own
// (pure: the caller passes steady milliseconds): each record the agent appends to its event file
// gets "seq" (1, 2, ... per task) and waits here until the server says it holds it. The queue
// decides when the next request is due (every `every_ms`, at once for the records the server
// must see soon, later after a failure: 1 s doubling to 30 s, with jitter), builds its batch (at
// most 256 records and 1 MiB) and reads the answer (agents/README.md, "Pushing records home").

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace orch::agent {

struct PushQueueOptions {
  std::int64_t every_ms = 1000;   // a batch at most this long after its first record
  std::size_t max_queued = 4096;  // past this, the oldest droppable record goes
  std::size_t max_batch = 256;    // records in one request
  std::size_t max_batch_bytes = (1 << 20) - 4096;  // the records' bytes (the envelope fits)
  std::int64_t backoff_first_ms = 1000;
  std::int64_t backoff_max_ms = 30'000;
};

// What came back from one request. status 0: no answer (unreachable, cut, timed out).
struct PushAnswer {
  int status = 0;
  std::string body;
  std::string error;  // why there was no answer (for the message on stderr)
};

// One request's records: "[rec,rec,...]" with their seqs, ready for the envelope.
struct PushBatch {
  std::string records_json;
  std::size_t count = 0;
  std::int64_t first_seq = 0;
  std::int64_t last_seq = 0;
};

class PushQueue {
 public:
  // jitter() returns a number in [0, 1): a wait of d becomes d/2 + jitter() * d/2.
  PushQueue(PushQueueOptions options, std::function<double()> jitter);

  // Queues one event-file line (a JSON object) with the next seq. Records the server must see
  // soon (start, exit, fault, checkpoint, hang, io_stall) make the next request due at once
  // (unless backing off). Past max_queued the oldest heartbeat goes, else the oldest progress
  // or checkpoint_start; the others are never dropped. Nothing is queued once stopped.
  void add(std::string_view line, std::int64_t now_ms);

  // Milliseconds until the next request is due (0: now), or -1 when none is (nothing queued,
  // a request in flight, or stopped).
  std::int64_t next_due_in(std::int64_t now_ms) const;

  // The next request's records when one is due; the request is then in flight until on_answer.
  std::optional<PushBatch> take_batch(std::int64_t now_ms);

  // Reads the answer to the request in flight. 200 drops every record up to its last_seq; 410
  // (the attempt is over), 401 and 403 (a credential that will not heal) stop the pushing for
  // good; 429, 5xx and no answer back off; 413 halves the batch (a record alone too large for
  // the server is dropped), 400 drops the batch. Returns a line for stderr when this answer
  // deserves one (the first failure of a run of them, a stop, a drop), else "".
  std::string on_answer(const PushAnswer& answer, std::int64_t now_ms);

  // The agent is exiting: the next request goes now (not after the backoff), and failures from
  // here back off from 1 s again.
  void hurry(std::int64_t now_ms);

  bool stopped() const { return stopped_; }
  bool empty() const { return records_.empty(); }
  std::size_t size() const { return records_.size(); }
  std::int64_t next_seq() const { return next_seq_; }
  std::uint64_t dropped() const { return dropped_; }
  int failures() const { return failures_; }  // failed requests in a row

 private:
  struct Record {
    std::int64_t seq;
    std::string event;
    std::string json;  // the line with "seq" first
  };
  void make_room();
  void schedule(std::int64_t at_ms);
  std::string back_off(std::int64_t now_ms, const std::string& why);

  PushQueueOptions options_;
  std::function<double()> jitter_;
  std::deque<Record> records_;
  std::int64_t next_seq_ = 1;
  std::int64_t due_ms_ = -1;            // the next request's time; -1: none planned
  std::int64_t backoff_until_ms_ = -1;  // no request before this
  std::size_t batch_limit_;             // max_batch, halved by 413s
  bool in_flight_ = false;
  std::int64_t in_flight_last_seq_ = 0;
  std::size_t in_flight_count_ = 0;
  bool stopped_ = false;
  int failures_ = 0;      // failed requests in a row
  int backoff_step_ = 0;  // the backoff's exponent: failures_, but hurry() starts it again
  std::uint64_t dropped_ = 0;
};

// The event of a record line ("start", "heartbeat", ...; "" when it has none).
std::string record_event(std::string_view line);

// The "last_seq" of a 200's body, or nullopt when the body is not {"last_seq": N, ...}.
std::optional<std::int64_t> answer_last_seq(std::string_view body);

}  // namespace orch::agent
