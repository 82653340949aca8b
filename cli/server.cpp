#include "cli/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "adapters/transfer/rsync_transfer.h"
#include "cli/cluster_reload.h"
#include "cli/site_factories.h"
#include "scheduler/brain/brain.h"
#include "scheduler/runtime/brain_loop.h"
#include "scheduler/runtime/site_worker.h"
#include "scheduler/runtime/storage_worker.h"
#include "scheduler/runtime/transfer_worker.h"
#include "web/api_routes.h"
#include "web/backend/scheduler_backend.h"
#include "web/http_server.h"
#include "web/router.h"

namespace orch {

namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

struct Server::Parts {
  int lock_fd = -1;
  SystemClock clock;
  std::vector<std::unique_ptr<ClusterPort>> ports;
  std::unique_ptr<Store> brain_store;
  std::unique_ptr<Brain> brain;
  std::unique_ptr<BrainLoop> loop;
  std::vector<std::unique_ptr<SiteWorker>> workers;
  std::vector<std::unique_ptr<StorageWorker>> storage_workers;
  std::unique_ptr<TransferPort> transfer_port;
  std::unique_ptr<TransferWorker> transfers;
  std::unique_ptr<SchedulerBackend> backend;
  std::unique_ptr<HttpServer> http;
  std::string bind;
  std::string config_path;
  std::vector<ClusterSpec> clusters;  // as started

  ~Parts() {
    // Stop in the reverse order of start: no new requests, no new site work, then the brain.
    if (http) http->stop();
    if (transfers) transfers->stop();
    for (auto& w : storage_workers) w->stop();
    for (auto& w : workers) w->stop();
    if (loop) loop->stop();
    if (lock_fd >= 0) close(lock_fd);
  }
};

namespace {

// One server per state directory: a second one would launch everything twice.
Result<int> lock_state_dir(const std::string& dir) {
  std::string path = dir + "/server.lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return make_error(ErrorKind::io, "cannot open " + path + ": " + std::strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return make_error(ErrorKind::conflict, "another orchestrate server is using state directory " +
                                               dir + "; stop it or pick another --state");
  }
  return fd;
}

}  // namespace

Server::Server(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}
Server::~Server() {
  stop();
}

void Server::stop() {
  parts_.reset();
}

int Server::port() const {
  return parts_ ? parts_->http->port() : 0;
}

Result<nlohmann::json> Server::reload() {
  if (!parts_ || parts_->config_path.empty()) {
    return make_error(ErrorKind::unsupported, "this server was started without a clusters file");
  }
  return reload_clusters_file(parts_->config_path, parts_->clusters, *parts_->loop);
}

std::string Server::url() const {
  return "http://" + (parts_ ? parts_->bind : std::string("127.0.0.1")) + ":" +
         std::to_string(port());
}

Result<std::unique_ptr<Server>> Server::start(const ClustersFile& config, ServerSettings s) {
  if (s.state_dir.empty()) return make_error(ErrorKind::invalid, "--state DIR is required");
  std::error_code ec;
  fs::create_directories(s.state_dir, ec);
  if (ec) {
    return make_error(ErrorKind::io,
                      "cannot create state directory " + s.state_dir + ": " + ec.message());
  }
  s.state_dir = fs::absolute(s.state_dir).string();
  if (s.agent_path.empty()) s.agent_path = executable_dir() + "/orchestrate-agent";

  auto parts = std::make_unique<Parts>();
  auto lock = lock_state_dir(s.state_dir);
  if (!lock) return lock.error();
  parts->lock_fd = *lock;

  // A local site's storage defaults to a folder of the state directory (its provider says so);
  // the brain needs it to place checkpoint copies and datasets there.
  std::vector<ClusterSpec> clusters = config.clusters;
  for (auto& c : clusters) {
    const ProviderTraits* provider = find_provider(c.provider);
    if (provider && provider->storage_root == StorageRoot::state_dir && c.storage_root.empty()) {
      c.storage_root = s.state_dir + "/sites/" + c.name;
    }
  }

  const std::string db_path = s.state_dir + "/orchestrate.db";
  auto store = Store::open(db_path);
  if (!store) return store.error();
  parts->brain_store = std::move(*store);
  parts->brain = std::make_unique<Brain>(*parts->brain_store, parts->clock, clusters);
  if (auto r = parts->brain->start(); !r) return r.error();

  Parts* p = parts.get();
  parts->loop = std::make_unique<BrainLoop>(*parts->brain, s.tick_ms, [p] {
    for (auto& w : p->workers) w->wake();
    for (auto& w : p->storage_workers) w->wake();
    if (p->transfers) p->transfers->wake();
  });

  std::map<std::string, ClusterPort*> port_map;
  for (const auto& c : clusters) {
    auto port = make_site(c, SiteContext{s.agent_path});
    if (!port) return port.error();
    auto reader = Store::open(db_path);
    if (!reader) return reader.error();
    BrainLoop* loop = parts->loop.get();
    parts->workers.push_back(std::make_unique<SiteWorker>(
        c, **port, std::move(*reader), [loop](BrainEvent e) { loop->post(std::move(e)); }));
    auto storage_reader = Store::open(db_path);
    if (!storage_reader) return storage_reader.error();
    parts->storage_workers.push_back(std::make_unique<StorageWorker>(
        c, **port, std::move(*storage_reader), [loop](BrainEvent e) { loop->post(std::move(e)); }));
    port_map[c.name] = port->get();
    parts->ports.push_back(std::move(*port));
  }

  {
    auto reader = Store::open(db_path);
    if (!reader) return reader.error();
    BrainLoop* loop = parts->loop.get();
    parts->transfer_port =
        std::make_unique<RsyncTransferPort>(clusters, s.state_dir + "/transfers");
    parts->transfers = std::make_unique<TransferWorker>(
        clusters, *parts->transfer_port, std::move(*reader),
        [loop](BrainEvent e) { loop->post(std::move(e)); }, parts->clock);
  }

  ServerOptions http;
  http.lanes = api_lanes();
  // One read connection per handler thread at most: a request never waits for another's reads.
  std::size_t handler_threads = 0;
  for (const LaneOptions& lane : http.lanes)
    handler_threads += static_cast<std::size_t>(lane.threads);
  auto readers =
      std::make_unique<ReaderPool>([db_path] { return Store::open(db_path); }, handler_threads);
  parts->backend = std::make_unique<SchedulerBackend>(std::move(readers), *parts->loop, clusters,
                                                      port_map, parts->clock);
  parts->config_path = s.config_path;
  parts->clusters = clusters;
  if (!s.config_path.empty()) {
    parts->backend->set_reload(
        [p] { return reload_clusters_file(p->config_path, p->clusters, *p->loop); });
  }
  http.bind = s.bind.value_or(config.server.bind);
  http.port = s.port.value_or(config.server.port);
  parts->bind = http.bind;
  auto router = std::make_shared<Router>(make_api_router(*parts->backend));
  http.lane_of = [router](const HttpRequest& req) {
    return static_cast<std::size_t>(router->lane_of(req));
  };
  parts->http = std::make_unique<HttpServer>(
      http, [router](const HttpRequest& req) { return router->dispatch(req); });

  parts->loop->start();
  for (auto& w : parts->workers) w->start();
  for (auto& w : parts->storage_workers) w->start();
  parts->transfers->start();
  if (auto r = parts->http->start(); !r) return r.error();
  return std::unique_ptr<Server>(new Server(std::move(parts)));
}

}  // namespace orch
