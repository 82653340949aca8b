#pragma once
// The fake's etcd: every object by (resource, namespace, name), one global resourceVersion
// counter, a bounded history of changes and the fan-out of changes to open watches.
//
// Thread-safe. Watch semantics follow the real API server: a watch from resourceVersion N gets
// every change after N (a change that makes an object start or stop matching the watch's
// selectors arrives as ADDED or DELETED); a watch without a resourceVersion (or "0") first gets
// an ADDED event for each current object; a watch from a resourceVersion older than the
// history kept is answered with ApiError 410 "Expired" ("too old resource version").

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "testkit/fake_kube/selectors.h"

namespace orch::fake_kube {

using nlohmann::json;

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED
  json object;
};

struct WatchFilter {
  std::string resource;  // "pods", "jobs", ...
  std::string ns;        // "" for every namespace
  LabelSelector labels;
  FieldSelector fields;
  bool matches(const json& object) const;
};

// One open watch: the store pushes matching events; the HTTP session pops them.
class Watcher {
 public:
  explicit Watcher(WatchFilter filter) : filter_(std::move(filter)) {}
  enum class Wait { events, closed, timeout };
  // Moves the queued events into `out`; waits until there is one, the watch is closed or the
  // deadline passes.
  Wait next(std::vector<WatchEvent>& out, std::chrono::steady_clock::time_point deadline);
  void close();
  bool closed() const;
  const WatchFilter& filter() const { return filter_; }
  void push(WatchEvent event);

 private:
  const WatchFilter filter_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchEvent> queue_;
  bool closed_ = false;
};

struct ListResult {
  std::vector<json> items;
  std::string resource_version;
};

class ObjectStore {
 public:
  explicit ObjectStore(std::size_t history_limit = 5000);

  // Stores a new object: fills metadata.uid (unless admission did), resourceVersion and
  // creationTimestamp, and the name from generateName. Throws ApiError 409 AlreadyExists.
  json create(const std::string& resource, json object);
  std::optional<json> get(const std::string& resource, const std::string& ns,
                          const std::string& name) const;
  ListResult list(const WatchFilter& filter) const;
  // Every object of a resource in every namespace (for the controllers).
  std::vector<json> all(const std::string& resource) const;
  // Changes a copy with `change`; when it differs, stores it with a new resourceVersion and
  // tells the watches (MODIFIED). nullopt when the object does not exist.
  std::optional<json> update(const std::string& resource, const std::string& ns,
                             const std::string& name, const std::function<void(json&)>& change);
  // Removes the object (DELETED, with a new resourceVersion); nullopt when it did not exist.
  std::optional<json> remove(const std::string& resource, const std::string& ns,
                             const std::string& name);
  bool uid_exists(const std::string& uid) const;

  // Opens a watch; see the header comment. from_rv "" or "0": current objects first.
  std::shared_ptr<Watcher> watch(const WatchFilter& filter, const std::string& from_rv);
  // Forgets the history: a watch from any resourceVersion older than now gets 410 Expired.
  void compact();
  // Ends every open watch (their streams end as when the real server restarts).
  void close_watchers();
  std::string resource_version() const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource, ns, name
  struct Change {
    std::int64_t rv;
    std::string resource;
    std::string type;
    json object;
    json previous;  // MODIFIED only
  };
  void record(Change change);  // history + fan-out; mu_ held
  static std::optional<WatchEvent> event_for(const Change& change, const WatchFilter& filter);

  mutable std::mutex mu_;
  std::map<Key, json> objects_;
  std::unordered_map<std::string, Key> by_uid_;
  std::int64_t rv_ = 1;
  std::int64_t floor_ = 1;  // a watch from N >= floor_ has every change after N in history_
  std::deque<Change> history_;
  std::size_t history_limit_;
  std::vector<std::weak_ptr<Watcher>> watchers_;
};

}  // namespace orch::fake_kube
