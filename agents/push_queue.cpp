// See push_queue.h.
#include "agents/push_queue.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "agents/mini_json.h"

namespace orch::agent {
namespace {

// Records the server must see soon: the attempt's verdicts hang on them.
bool urgent(const std::string& event) {
  return event == "start" || event == "exit" || event == "fault" || event == "checkpoint" ||
         event == "hang" || event == "io_stall";
}

std::string with_seq(std::string_view line, std::int64_t seq) {
  const std::string head = "{\"seq\":" + std::to_string(seq);
  if (line.size() < 2 || line.front() != '{') return head + "}";  // never written by the agent
  std::string_view rest = line.substr(1);
  const bool empty_object = rest.find_first_not_of(" }") == std::string_view::npos;
  return head + (empty_object ? "}" : "," + std::string(rest));
}

std::string first_words(const std::string& body) {
  std::string out = body.substr(0, 200);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

}  // namespace

std::string record_event(std::string_view line) {
  constexpr std::string_view kKey = "\"event\":\"";
  const size_t at = line.find(kKey);
  if (at == std::string_view::npos) return "";
  const size_t from = at + kKey.size();
  const size_t end = line.find('"', from);
  return end == std::string_view::npos ? "" : std::string(line.substr(from, end - from));
}

std::optional<std::int64_t> answer_last_seq(std::string_view body) {
  std::string error;
  auto doc = parse_json(body, &error);
  if (!doc || !doc->is_object()) return std::nullopt;
  const JsonValue* last = doc->get("last_seq");
  if (last == nullptr || !last->is_number() || last->number < 0 || last->number > 9e15 ||
      std::floor(last->number) != last->number) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(last->number);
}

PushQueue::PushQueue(PushQueueOptions options, std::function<double()> jitter)
    : options_(options), jitter_(std::move(jitter)), batch_limit_(options.max_batch) {}

void PushQueue::add(std::string_view line, std::int64_t now_ms) {
  if (stopped_) return;
  const std::int64_t seq = next_seq_++;
  std::string event = record_event(line);
  const bool soon = urgent(event);
  records_.push_back({seq, std::move(event), with_seq(line, seq)});
  make_room();
  schedule(soon ? now_ms : now_ms + options_.every_ms);
}

void PushQueue::make_room() {
  while (records_.size() > options_.max_queued) {
    auto victim = std::find_if(records_.begin(), records_.end(),
                               [](const Record& r) { return r.event == "heartbeat"; });
    if (victim == records_.end()) {
      victim = std::find_if(records_.begin(), records_.end(), [](const Record& r) {
        return r.event == "progress" || r.event == "checkpoint_start";
      });
    }
    if (victim == records_.end()) return;  // only records that must reach the server
    records_.erase(victim);
    ++dropped_;
  }
}

void PushQueue::schedule(std::int64_t at_ms) {
  due_ms_ = due_ms_ < 0 ? at_ms : std::min(due_ms_, at_ms);
  due_ms_ = std::max(due_ms_, backoff_until_ms_);
}

void PushQueue::hurry(std::int64_t now_ms) {
  backoff_step_ = 0;
  backoff_until_ms_ = -1;
  if (!records_.empty()) due_ms_ = now_ms;
}

std::int64_t PushQueue::next_due_in(std::int64_t now_ms) const {
  if (stopped_ || in_flight_ || records_.empty()) return -1;
  if (due_ms_ < 0) return options_.every_ms;
  return std::max<std::int64_t>(0, due_ms_ - now_ms);
}

std::optional<PushBatch> PushQueue::take_batch(std::int64_t now_ms) {
  if (next_due_in(now_ms) != 0) return std::nullopt;
  PushBatch batch;
  batch.records_json = "[";
  for (const Record& r : records_) {
    const bool full = batch.count >= batch_limit_ ||
                      batch.records_json.size() + r.json.size() + 2 > options_.max_batch_bytes;
    if (batch.count > 0 && full) break;
    if (batch.count > 0) batch.records_json += ',';
    batch.records_json += r.json;
    if (batch.count++ == 0) batch.first_seq = r.seq;
    batch.last_seq = r.seq;
  }
  batch.records_json += ']';
  in_flight_ = true;
  in_flight_last_seq_ = batch.last_seq;
  in_flight_count_ = batch.count;
  due_ms_ = -1;
  return batch;
}

std::string PushQueue::back_off(std::int64_t now_ms, const std::string& why) {
  ++failures_;
  ++backoff_step_;
  std::int64_t wait = options_.backoff_first_ms;
  for (int i = 1; i < backoff_step_ && wait < options_.backoff_max_ms; ++i) wait *= 2;
  wait = std::min(wait, options_.backoff_max_ms);
  const double j = std::clamp(jitter_ ? jitter_() : 0.0, 0.0, 1.0);
  backoff_until_ms_ = now_ms + wait / 2 + std::llround(j * static_cast<double>(wait / 2));
  due_ms_ = backoff_until_ms_;
  if (failures_ > 1) return "";
  return why + "; retrying, waiting 1 s doubling to 30 s between tries";
}

std::string PushQueue::on_answer(const PushAnswer& answer, std::int64_t now_ms) {
  in_flight_ = false;
  const int status = answer.status;
  const auto drop_through = [this](std::int64_t last) {
    while (!records_.empty() && records_.front().seq <= last) records_.pop_front();
  };
  if (status == 410 || status == 401 || status == 403) {
    stopped_ = true;
    records_.clear();
    due_ms_ = -1;
    return status == 410 ? "the server says the attempt is over (410): pushing stopped; the "
                           "event file keeps every record"
                         : "the server refused the push credential (" + std::to_string(status) +
                               "): pushing stopped for good; the event file keeps every record";
  }
  if (status == 413 && in_flight_count_ > 1) {
    batch_limit_ = std::max<std::size_t>(1, in_flight_count_ / 2);
    schedule(now_ms);
    return "";
  }
  if (status == 413 || status == 400) {
    drop_through(in_flight_last_seq_);
    dropped_ += in_flight_count_;
    if (!records_.empty()) schedule(now_ms + options_.every_ms);
    return "the server refused " + std::to_string(in_flight_count_) + " record(s) (" +
           std::to_string(status) + "): dropped them: " + first_words(answer.body);
  }
  if (status != 200) {
    const std::string why =
        status == 0 ? answer.error : "the server answered " + std::to_string(status);
    return back_off(now_ms, "cannot push records: " + why);
  }
  const auto last = answer_last_seq(answer.body);
  if (!last) return back_off(now_ms, "cannot push records: a 200 without last_seq");
  const int failed_before = failures_;
  failures_ = 0;
  backoff_step_ = 0;
  backoff_until_ms_ = -1;
  batch_limit_ = options_.max_batch;
  drop_through(*last);
  if (!records_.empty()) {
    const bool backlog = records_.size() >= batch_limit_ ||
                         std::any_of(records_.begin(), records_.end(), [this](const Record& r) {
                           return r.seq > in_flight_last_seq_ && urgent(r.event);
                         });
    schedule(backlog ? now_ms : now_ms + options_.every_ms);
  }
  if (failed_before == 0) return "";
  return "records pushed again after " + std::to_string(failed_before) + " failed tries";
}

}  // namespace orch::agent
