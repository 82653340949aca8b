#include "adapters/kubernetes/pod_informer.h"

namespace orch::kube {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kWatchSpan{60000};  // one watch call; then the next one resumes
constexpr milliseconds kRetryPause{500};   // after a failed list or watch

}  // namespace

PodInformer::PodInformer(KubeClient& client, std::string pods_path, std::string selector)
    : client_(client), pods_path_(std::move(pods_path)), selector_(std::move(selector)) {}

PodInformer::~PodInformer() {
  stop();
}

void PodInformer::start() {
  thread_ = std::thread([this] { run(); });
}

void PodInformer::stop() {
  stopping_ = true;
  client_.interrupt_watches();
  if (thread_.joinable()) thread_.join();
}

std::optional<std::vector<PodInfo>> PodInformer::pods(const std::string& token) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!synced_) return std::nullopt;
  std::vector<PodInfo> out;
  for (const auto& [name, pod] : pods_) {
    if (pod.token == token) out.push_back(pod);
  }
  return out;
}

void PodInformer::run() {
  while (!stopping_) {
    bool relist_now = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      relist_now = need_relist_;
    }
    if (relist_now && !relist()) {
      std::this_thread::sleep_for(kRetryPause);
      continue;
    }
    // Stopped while it listed: interrupt_watches() reaches only watches already open, so a
    // watch opened now would run its whole span before stop() could join.
    if (stopping_) break;
    watch_until_ended();
  }
}

bool PodInformer::relist() {
  auto r = client_.request("GET", pods_path_ + "?labelSelector=" + selector_);
  if (!r || r->status != 200) {
    std::lock_guard<std::mutex> lock(mu_);
    synced_ = false;
    return false;
  }
  auto pods = parse_pods(r->body);
  auto version = parse_list_resource_version(r->body);
  if (!pods || !version) {
    std::lock_guard<std::mutex> lock(mu_);
    synced_ = false;
    return false;
  }
  ++lists_;
  std::lock_guard<std::mutex> lock(mu_);
  pods_.clear();
  for (auto& p : *pods) pods_[p.name] = std::move(p);
  resource_version_ = *version;
  synced_ = true;
  need_relist_ = false;
  return true;
}

void PodInformer::apply(const WatchEvent& event) {
  if (event.type == WatchEventType::bookmark) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!event.resource_version.empty()) resource_version_ = event.resource_version;
    return;
  }
  auto pod = parse_pod(event.object);
  if (!pod) return;  // a malformed object: the next relist corrects the cache
  ++events_;
  std::lock_guard<std::mutex> lock(mu_);
  if (event.type == WatchEventType::deleted) {
    pods_.erase(pod->name);
  } else {
    pods_[pod->name] = *pod;
  }
  if (!event.resource_version.empty()) resource_version_ = event.resource_version;
}

void PodInformer::watch_until_ended() {
  std::string from;
  {
    std::lock_guard<std::mutex> lock(mu_);
    from = resource_version_;
  }
  bool gone = false;
  auto r = client_.watch(
      pods_path_ + "?watch=1&allowWatchBookmarks=true&labelSelector=" + selector_ +
          "&resourceVersion=" + from,
      [&](const std::string& line) {
        auto event = parse_watch_event(line);
        if (!event) return true;  // one bad line does not stop the stream
        if (event->type == WatchEventType::error) {
          gone = event->gone;
          return false;
        }
        apply(*event);
        return !stopping_;
      },
      kWatchSpan);
  const bool failed = !r || (r->status != 200 && r->status != 410 && !gone);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed) {
      // The server is not answering as it should: callers ask it directly (and so learn it),
      // and the cache is rebuilt by a list once it answers again.
      synced_ = false;
      need_relist_ = true;
    } else if (gone || r->status == 410 || r->end == WatchEnd::connection_lost) {
      // Too old, or the stream broke mid-way: list again. The cache stays usable meanwhile.
      need_relist_ = true;
    }
  }
  if (failed && !stopping_) std::this_thread::sleep_for(kRetryPause);
}

}  // namespace orch::kube
