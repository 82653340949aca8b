#include "scheduler/runtime/storage_worker.h"

#include <chrono>
#include <set>
#include <utility>

#include "scheduler/model/manifest_action.h"

namespace orch {

StorageWorker::StorageWorker(ClusterSpec spec, ClusterPort& port,
                             std::unique_ptr<StoreReader> reader, Post post)
    : spec_(std::move(spec)), port_(port), reader_(std::move(reader)), post_(std::move(post)) {}

StorageWorker::~StorageWorker() {
  stop();
}

void StorageWorker::start() {
  loop_.start([this] { run_once(); }, std::chrono::milliseconds(spec_.poll_interval_ms));
}
void StorageWorker::stop() {
  loop_.stop();
}
void StorageWorker::wake() {
  loop_.wake();
}

void StorageWorker::run_once() {
  ++round_;
  auto pending = reader_->pending_actions(spec_.name);
  if (!pending) return;  // a busy database: next round
  std::set<std::int64_t> still_pending;
  for (const auto& a : *pending) still_pending.insert(a.id);
  for (auto it = posted_.begin(); it != posted_.end();) {
    const bool forget = still_pending.count(it->first) == 0 || round_ - it->second > kRetryRounds;
    it = forget ? posted_.erase(it) : std::next(it);
  }
  for (const auto& action : *pending) {
    if (!is_storage_action(action.kind) || posted_.count(action.id) != 0) continue;
    if (loop_.stopping()) return;
    execute(action);
  }
}

void StorageWorker::execute(const OutboxRow& action) {
  if (!action.payload.is_object()) {
    posted_[action.id] = round_;
    const Error bad =
        make_error(ErrorKind::internal,
                   "storage action " + std::to_string(action.id) + " has no payload object");
    if (action.kind == ActionKind::remove) {
      post_(RemoveCompleted{action.id, spec_.name, nlohmann::json::object(), bad});
    } else {
      post_(ManifestCompleted{action.id, spec_.name, nlohmann::json::object(), bad});
    }
    return;
  }
  const std::string path = action.payload.value("path", std::string());
  // The directory the copy must lie in (issue 37). A remove action written before there was one
  // has none, and the site refuses it: nothing is deleted that was not confined.
  const std::string within = action.payload.value("within", std::string());
  if (action.kind == ActionKind::remove) {
    auto r = port_.remove_path({path, within});
    if (!r && r.error().kind == ErrorKind::unreachable) return;  // next round
    posted_[action.id] = round_;
    post_(RemoveCompleted{action.id, spec_.name, action.payload, r});
    return;
  }
  ManifestRequest request;
  request.path = path;
  request.within = within;
  const std::string hash = action.payload.value("hash", std::string("all"));
  const auto mode = parse_manifest_hash(hash);
  if (!mode) {
    posted_[action.id] = round_;
    post_(ManifestCompleted{
        action.id, spec_.name, action.payload,
        make_error(ErrorKind::invalid, "manifest action " + std::to_string(action.id) +
                                           " has an unknown hash mode \"" + hash +
                                           "\"; expected all, none or "
                                           "listed")});
    return;
  }
  request.hash = *mode;
  if (*mode == ManifestRequest::Hash::listed) {
    request.hash_files = action.payload.value("hash_files", std::vector<std::string>{});
  }
  auto listed = port_.manifest(request);
  if (!listed && listed.error().kind == ErrorKind::unreachable) return;  // next round
  posted_[action.id] = round_;
  post_(ManifestCompleted{action.id, spec_.name, action.payload, std::move(listed)});
}

}  // namespace orch
