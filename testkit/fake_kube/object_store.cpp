#include "testkit/fake_kube/object_store.h"

#include <algorithm>

#include "testkit/fake_kube/kube_json.h"

namespace orch::fake_kube {

bool WatchFilter::matches(const json& object) const {
  if (!ns.empty() && string_at(object, {"metadata", "namespace"}) != ns) return false;
  return labels.matches(at_path(object, {"metadata", "labels"})) && fields.matches(object);
}

Watcher::Wait Watcher::next(std::vector<WatchEvent>& out,
                            std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  cv_.wait_until(lock, deadline, [&] { return closed_ || !queue_.empty(); });
  if (!queue_.empty()) {
    for (auto& e : queue_) out.push_back(std::move(e));
    queue_.clear();
    return Wait::events;
  }
  return closed_ ? Wait::closed : Wait::timeout;
}

void Watcher::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool Watcher::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

void Watcher::push(WatchEvent event) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    queue_.push_back(std::move(event));
  }
  cv_.notify_all();
}

ObjectStore::ObjectStore(std::size_t history_limit) : history_limit_(history_limit) {}

json ObjectStore::create(const std::string& resource, json object) {
  json& meta = object["metadata"];
  if (!meta.is_object()) meta = json::object();
  std::lock_guard lock(mu_);
  if (string_at(meta, {"name"}).empty()) {
    const std::string prefix = string_at(meta, {"generateName"});
    std::string name;
    for (int tries = 0; tries < 100; ++tries) {
      name = prefix + random_suffix();
      if (!objects_.count({resource, string_at(meta, {"namespace"}), name})) break;
    }
    meta["name"] = name;
  }
  const Key key{resource, string_at(meta, {"namespace"}), meta["name"].get<std::string>()};
  if (objects_.count(key)) {
    ApiError error(409, "AlreadyExists", "");
    throw error;  // the route fills the message (it knows the group)
  }
  if (string_at(meta, {"uid"}).empty()) meta["uid"] = new_uid();
  meta["resourceVersion"] = std::to_string(++rv_);
  meta["creationTimestamp"] = now_rfc3339();
  objects_[key] = object;
  by_uid_[meta["uid"].get<std::string>()] = key;
  record({rv_, resource, "ADDED", object, nullptr});
  return object;
}

std::optional<json> ObjectStore::get(const std::string& resource, const std::string& ns,
                                     const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find({resource, ns, name});
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

ListResult ObjectStore::list(const WatchFilter& filter) const {
  std::lock_guard lock(mu_);
  ListResult out;
  out.resource_version = std::to_string(rv_);
  for (const auto& [key, object] : objects_) {
    if (std::get<0>(key) == filter.resource && filter.matches(object)) out.items.push_back(object);
  }
  return out;
}

std::vector<json> ObjectStore::all(const std::string& resource) const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  for (const auto& [key, object] : objects_) {
    if (std::get<0>(key) == resource) out.push_back(object);
  }
  return out;
}

std::optional<json> ObjectStore::update(const std::string& resource, const std::string& ns,
                                        const std::string& name,
                                        const std::function<void(json&)>& change) {
  std::lock_guard lock(mu_);
  auto it = objects_.find({resource, ns, name});
  if (it == objects_.end()) return std::nullopt;
  json next = it->second;
  change(next);
  if (next == it->second) return next;
  next["metadata"]["resourceVersion"] = std::to_string(++rv_);
  json previous = std::move(it->second);
  it->second = next;
  record({rv_, resource, "MODIFIED", next, std::move(previous)});
  return next;
}

std::optional<json> ObjectStore::remove(const std::string& resource, const std::string& ns,
                                        const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = objects_.find({resource, ns, name});
  if (it == objects_.end()) return std::nullopt;
  json last = std::move(it->second);
  objects_.erase(it);
  by_uid_.erase(string_at(last, {"metadata", "uid"}));
  last["metadata"]["resourceVersion"] = std::to_string(++rv_);
  record({rv_, resource, "DELETED", last, nullptr});
  return last;
}

bool ObjectStore::uid_exists(const std::string& uid) const {
  std::lock_guard lock(mu_);
  return by_uid_.count(uid) > 0;
}

std::optional<WatchEvent> ObjectStore::event_for(const Change& change, const WatchFilter& filter) {
  if (change.resource != filter.resource) return std::nullopt;
  const bool now = filter.matches(change.object);
  if (change.type != "MODIFIED") {
    if (!now) return std::nullopt;
    return WatchEvent{change.type, change.object};
  }
  const bool before = filter.matches(change.previous);
  if (now && before) return WatchEvent{"MODIFIED", change.object};
  if (now) return WatchEvent{"ADDED", change.object};
  if (before) return WatchEvent{"DELETED", change.object};
  return std::nullopt;
}

void ObjectStore::record(Change change) {
  for (auto it = watchers_.begin(); it != watchers_.end();) {
    auto watcher = it->lock();
    if (!watcher || watcher->closed()) {
      it = watchers_.erase(it);
      continue;
    }
    if (auto event = event_for(change, watcher->filter())) watcher->push(std::move(*event));
    ++it;
  }
  history_.push_back(std::move(change));
  while (history_.size() > history_limit_) {
    floor_ = history_.front().rv;
    history_.pop_front();
  }
}

std::shared_ptr<Watcher> ObjectStore::watch(const WatchFilter& filter, const std::string& from_rv) {
  auto watcher = std::make_shared<Watcher>(filter);
  std::lock_guard lock(mu_);
  if (from_rv.empty() || from_rv == "0") {
    for (const auto& [key, object] : objects_) {
      if (std::get<0>(key) == filter.resource && filter.matches(object)) {
        watcher->push({"ADDED", object});
      }
    }
  } else {
    std::int64_t from = 0;
    try {
      std::size_t used = 0;
      from = std::stoll(from_rv, &used);
      if (used != from_rv.size() || from < 0) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw ApiError(400, "BadRequest",
                     "invalid resource version \"" + from_rv + "\": expected an integer");
    }
    if (from < floor_) {
      throw ApiError(410, "Expired",
                     "too old resource version: " + from_rv + " (" + std::to_string(floor_) + ")");
    }
    for (const Change& change : history_) {
      if (change.rv <= from) continue;
      if (auto event = event_for(change, filter)) watcher->push(std::move(*event));
    }
  }
  watchers_.push_back(watcher);
  return watcher;
}

void ObjectStore::compact() {
  std::lock_guard lock(mu_);
  history_.clear();
  floor_ = rv_;
}

void ObjectStore::close_watchers() {
  std::lock_guard lock(mu_);
  for (auto& w : watchers_) {
    if (auto watcher = w.lock()) watcher->close();
  }
  watchers_.clear();
}

std::string ObjectStore::resource_version() const {
  std::lock_guard lock(mu_);
  return std::to_string(rv_);
}

}  // namespace orch::fake_kube
