#include "adapters/webhook/webhook_worker.h"

#include <algorithm>
#include <iostream>

#include "adapters/webhook/webhook_message.h"
#include "web/http/http_client.h"

namespace orch {
namespace {

constexpr int kBatch = 100;

Result<std::int64_t> stored_cursor(Db& db, const std::string& name) {
  auto st = db.prepare("SELECT last_notice FROM cursors WHERE name = ?");
  if (!st) return st.error();
  st->bind(1, name);
  auto row = st->step();
  if (!row) return row.error();
  return *row ? st->col_int(0) : -1;
}

}  // namespace

Result<std::unique_ptr<WebhookWorker>> WebhookWorker::open(
    std::vector<WebhookSpec> hooks, std::map<std::string, std::string> secrets,
    std::unique_ptr<StoreReader> reader, const std::string& cursor_db, WebhookOptions options) {
  auto db = Db::open(cursor_db);
  if (!db) return db.error();
  if (auto r = db->exec("CREATE TABLE IF NOT EXISTS cursors (name TEXT PRIMARY KEY, "
                        "last_notice INTEGER NOT NULL)");
      !r) {
    return make_error(ErrorKind::io, "cannot set up " + cursor_db + ": " + r.error().message);
  }
  auto newest = reader->last_notice_id();
  if (!newest) return newest.error();
  std::vector<Hook> list;
  for (auto& spec : hooks) {
    Hook h;
    h.secret = secrets[spec.name];
    auto cursor = stored_cursor(*db, spec.name);
    if (!cursor) return cursor.error();
    h.cursor = *cursor >= 0 ? *cursor : *newest;
    h.spec = std::move(spec);
    list.push_back(std::move(h));
  }
  std::unique_ptr<WebhookWorker> w(
      new WebhookWorker(std::move(list), std::move(reader), std::move(*db), options));
  for (const Hook& h : w->hooks_) w->save_cursor(h);
  return w;
}

WebhookWorker::WebhookWorker(std::vector<Hook> hooks, std::unique_ptr<StoreReader> reader,
                             Db cursors, WebhookOptions options)
    : hooks_(std::move(hooks)),
      reader_(std::move(reader)),
      cursors_(std::move(cursors)),
      options_(options) {}

WebhookWorker::~WebhookWorker() {
  stop();
}

void WebhookWorker::start() {
  loop_.start([this] { run_once(); }, options_.interval);
}

void WebhookWorker::stop() {
  loop_.stop();
}

void WebhookWorker::wake() {
  loop_.wake();
}

void WebhookWorker::run_once() {
  for (Hook& h : hooks_) {
    if (loop_.stopping()) return;
    if (std::chrono::steady_clock::now() < h.next_try) continue;
    deliver_due(h);
  }
}

void WebhookWorker::deliver_due(Hook& h) {
  auto batch = reader_->notices_after(h.cursor, kBatch);
  if (!batch) return;  // a busy database: the next round
  for (const NoticeRow& n : *batch) {
    if (loop_.stopping()) return;
    std::optional<ExitCause> cause;
    std::string excerpt;
    NoticeRow notice = n;
    if (n.job_id && n.attempt_no) {
      auto attempts = reader_->attempts_of(*n.job_id);
      if (!attempts) return;
      for (const auto& a : *attempts) {
        if (a.no != *n.attempt_no) continue;
        cause = a.cause;
        excerpt = a.error_excerpt;
        if (notice.cluster.empty()) notice.cluster = a.cluster;
      }
    }
    const std::optional<std::string> event = webhook_event_of(notice, cause);
    const bool wanted = event && std::find(h.spec.events.begin(), h.spec.events.end(), *event) !=
                                     h.spec.events.end();
    if (wanted) {
      std::string why;
      if (!post(h, notice, *event, excerpt, why)) {
        ++h.failures;
        h.backoff = h.backoff.count() == 0 ? options_.first_backoff
                                           : std::min(options_.max_backoff, h.backoff * 2);
        h.next_try = std::chrono::steady_clock::now() + h.backoff;
        std::cerr << "orchestrate: webhook " << h.spec.name << ": " << *event << " (notice " << n.id
                  << ") not delivered, try " << h.failures << ": " << why << "; trying again in "
                  << h.backoff.count() << " ms\n";
        return;
      }
      if (h.failures > 0) {
        std::cerr << "orchestrate: webhook " << h.spec.name << ": delivered notice " << n.id
                  << " after " << h.failures + 1 << " tries\n";
      }
    }
    h.failures = 0;
    h.backoff = std::chrono::milliseconds(0);
    h.cursor = n.id;
    save_cursor(h);
  }
}

bool WebhookWorker::post(const Hook& h, const NoticeRow& n, const std::string& event,
                         const std::string& excerpt, std::string& why) {
  const std::string body = webhook_body(h.spec, n, event, excerpt);
  const std::string timestamp =
      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
  RequestOptions o;
  o.timeout_ms = options_.timeout_ms;
  o.headers = {{"X-Orchestrate-Event", event},
               {"X-Orchestrate-Delivery", std::to_string(n.id)},
               {"X-Orchestrate-Timestamp", timestamp},
               {"X-Orchestrate-Signature", webhook_signature(h.secret, timestamp, body)}};
  auto url = parse_server_url(h.spec.url);
  if (!url) {
    why = url.error().message;
    return false;
  }
  // The URL's path is the request's target; http_request puts it before "".
  auto r =
      http_request(h.spec.url, "POST", url->prefix.empty() ? "/" : "", body, "application/json", o);
  if (!r) {
    why = r.error().message;
    return false;
  }
  if (r->status < 200 || r->status > 299) {
    why = "the receiver answered HTTP " + std::to_string(r->status);
    return false;
  }
  return true;
}

void WebhookWorker::save_cursor(const Hook& h) {
  auto st = cursors_.prepare(
      "INSERT INTO cursors(name, last_notice) VALUES (?, ?) "
      "ON CONFLICT(name) DO UPDATE SET last_notice = excluded.last_notice");
  if (!st) return;
  st->bind(1, h.spec.name);
  st->bind(2, h.cursor);
  (void)st->step();
}

}  // namespace orch
