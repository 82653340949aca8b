#include "server/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "adapters/webhook/webhook_worker.h"
#include "scheduler/brain/brain.h"
#include "scheduler/runtime/brain_loop.h"
#include "scheduler/runtime/site_worker.h"
#include "scheduler/runtime/storage_worker.h"
#include "scheduler/runtime/transfer_worker.h"
#include "scheduler/secrets/secret_file.h"
#include "scheduler/secrets/secret_registry.h"
#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/price_section.h"
#include "scheduler/store/wal_checkpointer.h"
#include "server/cluster_reload.h"
#include "server/code_archives.h"
#include "server/first_admin.h"
#include "server/local_run_as.h"
#include "server/pushed_record_store.h"
#include "server/site_factories.h"
#include "server/site_transfer_port.h"
#include "web/access/access_guard.h"
#include "web/access/access_store.h"
#include "web/access/guarded_api.h"
#include "web/api_routes.h"
#include "web/backend/scheduler_backend.h"
#include "web/code_routes.h"
#include "web/http/http_server.h"
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
  // The workdir archives (<state>/code/<sha256>.tar; adapters/code/code_store.h) and their
  // REST face: made first, so that whatever reads them (sites, the backend) goes before them.
  std::unique_ptr<CodeStore> code_store;
  std::unique_ptr<CodeArchives> code;
  // The records agents push home (issue 44; <state>/pushed.db) and what the sites are given of
  // them (null without HTTPS): made before the sites, which read them, and gone after them.
  std::unique_ptr<StoreReader> life_reader;  // whether a pushing attempt lives; under life_mu
  std::mutex life_mu;
  std::unique_ptr<PushedRecordStore> pushed;
  std::unique_ptr<PushHome> push_home;
  std::vector<std::unique_ptr<ClusterPort>> ports;
  std::unique_ptr<Store> brain_store;
  std::unique_ptr<WalCheckpointer> checkpointer;  // the brain_store's; goes before it
  std::unique_ptr<Brain> brain;
  std::unique_ptr<BrainLoop> loop;
  std::vector<std::unique_ptr<SiteWorker>> workers;
  std::vector<std::unique_ptr<StorageWorker>> storage_workers;
  std::unique_ptr<SiteTransferPort> transfer_port;
  std::unique_ptr<TransferWorker> transfers;
  std::unique_ptr<SchedulerBackend> backend;
  std::unique_ptr<AccessStore> access;
  std::unique_ptr<SecretRegistry> secrets;  // before the workers and the backend that read it
  std::unique_ptr<GuardedApi> api;
  std::unique_ptr<HttpServer> http;
  std::string bind;
  std::string scheme = "http";  // https with server.tls
  ServerSettings settings;
  std::string db_path;
  // The clusters file's clusters (as started, and those a reload added), and the names of those
  // `orchestrate cluster add` brought (remembered in the store, not in the file).
  std::vector<ClusterSpec> from_file;
  std::vector<std::string> added_names;
  std::mutex admin_mu;  // one reload or add at a time
  std::mutex sites_mu;  // ports and workers: the brain's wake reads them while a cluster joins

  std::unique_ptr<WebhookWorker> webhooks;  // null without webhooks in the clusters file

  ~Parts() {
    // Stop in the reverse order of start: no new requests, no new site work, then the brain.
    if (http) http->stop();
    if (webhooks) webhooks->stop();
    if (transfers) transfers->stop();
    {
      // Not held while the loop stops: its last wake takes it.
      std::lock_guard<std::mutex> lock(sites_mu);
      for (auto& w : storage_workers) w->stop();
      for (auto& w : workers) w->stop();
    }
    if (loop) loop->stop();
    if (lock_fd >= 0) close(lock_fd);
  }

  // The site workers of a cluster, built but not started.
  struct Site {
    std::unique_ptr<ClusterPort> port;
    std::unique_ptr<SiteWorker> worker;
    std::unique_ptr<StorageWorker> storage;
  };
  Result<Site> make_site_workers(const ClusterSpec& c);
  // Clusters that join while the server runs: their sites are built, the brain admits them
  // (remembering the document when there is one), then their workers start. On an error none
  // joins.
  Result<BrainReply> join(const std::vector<ClusterSpec>& specs, const std::string& source,
                          const std::string& document);
  Result<nlohmann::json> reload();
  Result<nlohmann::json> add(const std::string& document, const std::string& source);
  Result<void> open_push_home(const ServerSpec& server);
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

// A local site's storage defaults to a folder of the state directory (its provider says so);
// the brain needs it to place checkpoint copies and datasets there.
void default_storage_roots(std::vector<ClusterSpec>& clusters, const std::string& state_dir) {
  for (auto& c : clusters) {
    const ProviderTraits* provider = find_provider(c.provider);
    if (provider && provider->storage_root == StorageRoot::state_dir && c.storage_root.empty()) {
      c.storage_root = state_dir + "/sites/" + c.name;
    }
  }
}

// The clusters `orchestrate cluster add` brought to earlier runs, less those the clusters file
// now defines (the file wins). One that no longer reads stops the start: dropping it would
// lose its running jobs.
Result<std::vector<ClusterSpec>> remembered_clusters(StoreReader& store,
                                                     const std::vector<ClusterSpec>& from_file) {
  auto rows = store.added_clusters();
  if (!rows) return rows.error();
  std::vector<std::string> known;
  known.reserve(from_file.size() + rows->size());
  for (const auto& c : from_file) known.push_back(c.name);
  for (const auto& row : *rows) known.push_back(row.name);
  std::vector<ClusterSpec> out;
  for (const auto& row : *rows) {
    if (find_cluster(from_file, row.name)) continue;
    auto parsed = parse_clusters_file(row.document, row.source, known);
    const ClusterSpec* spec = parsed ? find_cluster(parsed->clusters, row.name) : nullptr;
    if (!spec) {
      return make_error(ErrorKind::invalid,
                        "cluster \"" + row.name + "\", added with `orchestrate cluster add` from " +
                            row.source + ", no longer reads" +
                            (parsed ? std::string(": its document does not define it")
                                    : ": " + parsed.error().message) +
                            "; define it in the clusters file (which wins) and start again");
    }
    out.push_back(*spec);
  }
  return out;
}

}  // namespace

// The records agents push home: <state>/pushed.db, the attempts' lives read from the state, and
// with HTTPS what the sites give their agents (the credential, the certificate to trust).
Result<void> Server::Parts::open_push_home(const ServerSpec& server) {
  auto reader = StoreReader::open(db_path);
  if (!reader) return reader.error();
  life_reader = std::move(*reader);
  Parts* p = this;
  auto life_of = [p](const std::string& token) -> Result<AttemptLife> {
    std::lock_guard<std::mutex> lock(p->life_mu);
    auto row = p->life_reader->attempt_by_token(token);
    if (!row) return row.error();
    if (!*row) return AttemptLife::unknown;
    return (*row)->state == AttemptState::exited ? AttemptLife::ended : AttemptLife::live;
  };
  auto opened =
      PushedRecordStore::open(settings.state_dir + "/pushed.db", clock, std::move(life_of));
  if (!opened) return opened.error();
  pushed = std::move(*opened);
  if (!server.serves_tls()) return Ok{};
  // The agents trust the server's own chain (a leaf is taken as a trust anchor).
  std::ifstream in(server.tls.cert, std::ios::binary);
  std::ostringstream pem;
  pem << in.rdbuf();
  // One that cannot be read stops the start when the HTTP server loads it, with its reason.
  if (!in) return Ok{};
  auto home = std::make_unique<PushHome>();
  AccessStore* keys = access.get();
  home->credential = [keys](const std::string& token) { return keys->attempt_credential(token); };
  home->ca_pem = pem.str();
  home->records = pushed.get();
  push_home = std::move(home);
  return Ok{};
}

Result<Server::Parts::Site> Server::Parts::make_site_workers(const ClusterSpec& c) {
  Site site;
  auto port = make_site(c, SiteContext{settings.agent_path, push_home.get()});
  if (!port) return port.error();
  site.port = std::move(*port);
  auto reader = StoreReader::open(db_path);
  if (!reader) return reader.error();
  auto storage_reader = StoreReader::open(db_path);
  if (!storage_reader) return storage_reader.error();
  BrainLoop* l = loop.get();
  site.worker = std::make_unique<SiteWorker>(c, *site.port, std::move(*reader),
                                             [l](BrainEvent e) { l->post(std::move(e)); });
  site.worker->set_secrets(secrets.get());
  site.storage = std::make_unique<StorageWorker>(c, *site.port, std::move(*storage_reader),
                                                 [l](BrainEvent e) { l->post(std::move(e)); });
  return site;
}

Result<BrainReply> Server::Parts::join(const std::vector<ClusterSpec>& given,
                                       const std::string& source, const std::string& document) {
  std::vector<ClusterSpec> specs = given;
  default_storage_roots(specs, settings.state_dir);
  if (auto r = check_local_run_as(specs); !r) return r.error();
  if (auto r = open_state_dir_to_jobs(specs, settings.state_dir); !r) return r.error();
  std::vector<Site> sites;
  for (const auto& c : specs) {
    auto site = make_site_workers(c);
    if (!site)
      return make_error(site.error().kind, "cluster " + c.name + ": " + site.error().message);
    sites.push_back(std::move(*site));
  }
  auto reply = loop->call(AddClusters{specs, source, document});
  if (!reply) return reply.error();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    transfer_port->site_joined(specs[i], sites[i].port.get());
    transfers->cluster_joined(specs[i]);
    backend->cluster_joined(specs[i], sites[i].port.get());
    std::lock_guard<std::mutex> lock(sites_mu);
    sites[i].worker->start();
    sites[i].storage->start();
    workers.push_back(std::move(sites[i].worker));
    storage_workers.push_back(std::move(sites[i].storage));
    ports.push_back(std::move(sites[i].port));
  }
  return reply;
}

Result<nlohmann::json> Server::Parts::reload() {
  if (settings.config_path.empty()) {
    return make_error(ErrorKind::unsupported, "this server was started without a clusters file");
  }
  std::lock_guard<std::mutex> lock(admin_mu);
  auto reloaded = reload_clusters_file(
      settings.config_path, from_file, added_names, *loop,
      [this](const std::vector<ClusterSpec>& specs) -> Result<void> {
        auto r = join(specs, settings.config_path, "");
        if (!r) return r.error();
        return Ok{};
      },
      [this](const ClustersFile& file) { return secrets->configure(file.secrets); });
  if (reloaded) {
    // Every site checks itself again (a key file or a directory may have been fixed with it).
    std::lock_guard<std::mutex> sites(sites_mu);
    for (auto& w : workers) w->request_preflight();
  }
  return reloaded;
}

Result<nlohmann::json> Server::Parts::add(const std::string& document, const std::string& source) {
  std::lock_guard<std::mutex> lock(admin_mu);
  std::vector<std::string> known = added_names;
  for (const auto& c : from_file) known.push_back(c.name);
  auto parsed = parse_clusters_file(document, source, known);
  if (!parsed)
    return make_error(ErrorKind::invalid, "no cluster was added: " + parsed.error().message);
  for (const auto& c : parsed->clusters) {
    // One currency across the fleet (docs/config.md "Prices"), the file's clusters included.
    if (auto why = currency_conflict(c, from_file); !why.empty())
      return make_error(ErrorKind::invalid, "no cluster was added: " + why);
  }
  auto reply = join(parsed->clusters, source, document);
  if (!reply) return reply.error();
  nlohmann::json names = nlohmann::json::array();
  for (const auto& c : parsed->clusters) {
    names.push_back(c.name);
    added_names.push_back(c.name);
  }
  return nlohmann::json{{"added", names}, {"message", reply->message}};
}

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
  if (!parts_) return make_error(ErrorKind::unsupported, "the server is stopped");
  return parts_->reload();
}

std::string Server::url() const {
  return (parts_ ? parts_->scheme : std::string("http")) + "://" +
         (parts_ ? parts_->bind : std::string("127.0.0.1")) + ":" + std::to_string(port());
}

Result<std::unique_ptr<Server>> Server::start(const ClustersFile& config, ServerSettings s) {
  if (s.state_dir.empty()) return make_error(ErrorKind::invalid, "--state DIR is required");
  const std::string bind = s.bind.value_or(config.server.bind);
  const BindVerdict verdict = judge_bind(bind, config.server.serves_tls(), s.insecure_bind);
  if (!verdict.ok) return make_error(ErrorKind::invalid, verdict.message);
  if (!verdict.message.empty()) std::cerr << "orchestrate: WARNING: " << verdict.message << '\n';
  // Everything the server creates (databases, logs, run directories, job output) is for its
  // user alone.
  ::umask(077);
  std::error_code ec;
  fs::create_directories(s.state_dir, ec);
  if (ec) {
    return make_error(ErrorKind::io,
                      "cannot create state directory " + s.state_dir + ": " + ec.message());
  }
  if (::chmod(s.state_dir.c_str(), state_dir_mode(config.clusters, s.state_dir)) != 0) {
    return make_error(ErrorKind::io, "cannot make state directory " + s.state_dir +
                                         " owner-only: " + std::strerror(errno));
  }
  s.state_dir = fs::absolute(s.state_dir).string();
  if (s.agent_path.empty()) s.agent_path = executable_dir() + "/orchestrate-agent";

  auto parts = std::make_unique<Parts>();
  auto state_lock = lock_state_dir(s.state_dir);
  if (!state_lock) return state_lock.error();
  parts->lock_fd = *state_lock;
  parts->code_store = std::make_unique<CodeStore>(s.state_dir + "/code",
                                                  ArchiveLimits{.max_bytes = kMaxCodeArchiveBytes});
  parts->code = std::make_unique<CodeArchives>(*parts->code_store);

  parts->settings = s;
  const std::string db_path = s.state_dir + "/orchestrate.db";
  parts->db_path = db_path;
  auto store = Store::open(db_path);
  if (!store) return store.error();
  parts->brain_store = std::move(*store);
  ::chmod(db_path.c_str(), 0600);  // one made by an older version with the umask of its day
  // The brain's commits leave the WAL's checkpoints (copy and sync) to a thread of their own.
  auto checkpointer = WalCheckpointer::start(*parts->brain_store, db_path);
  if (!checkpointer) return checkpointer.error();
  parts->checkpointer = std::move(*checkpointer);
  auto access = AccessStore::open(s.state_dir + "/access.db", parts->clock);
  if (!access) return access.error();
  parts->access = std::move(*access);
  const std::string token_file = s.state_dir + "/admin.token";
  if (auto made = ensure_admin_token(*parts->access, token_file); !made) return made.error();
  if (auto r = parts->open_push_home(config.server); !r) return r.error();
  // Secrets a job may name: those set through the API (secrets.db, owner-only) and the clusters
  // file's, read from their sources now (a source that cannot be read stops the start).
  auto secret_store = SecretStore::open(s.state_dir + "/secrets.db", parts->clock);
  if (!secret_store) return secret_store.error();
  parts->secrets = std::make_unique<SecretRegistry>(std::move(*secret_store), parts->clock);
  if (auto r = parts->secrets->configure(config.secrets); !r) return r.error();

  // The file's clusters, then those added to earlier runs with `orchestrate cluster add`.
  parts->from_file = config.clusters;
  auto remembered = remembered_clusters(*parts->brain_store, config.clusters);
  if (!remembered) return remembered.error();
  std::vector<ClusterSpec> clusters = config.clusters;
  for (const auto& c : *remembered) {
    clusters.push_back(c);
    parts->added_names.push_back(c.name);
  }
  default_storage_roots(clusters, s.state_dir);
  if (auto r = check_local_run_as(clusters); !r) return r.error();
  if (auto r = open_state_dir_to_jobs(clusters, s.state_dir); !r) return r.error();
  parts->brain = std::make_unique<Brain>(*parts->brain_store, parts->clock, clusters,
                                         PlacementPipeline::standard(), config.scheduling);
  if (auto r = parts->brain->start(); !r) return r.error();

  Parts* p = parts.get();
  parts->loop = std::make_unique<BrainLoop>(*parts->brain, s.tick_ms, [p] {
    std::lock_guard<std::mutex> lock(p->sites_mu);
    for (auto& w : p->workers) w->wake();
    for (auto& w : p->storage_workers) w->wake();
    if (p->transfers) p->transfers->wake();
    if (p->webhooks) p->webhooks->wake();
  });

  std::map<std::string, ClusterPort*> port_map;
  for (const auto& c : clusters) {
    auto site = parts->make_site_workers(c);
    if (!site) return site.error();
    port_map[c.name] = site->port.get();
    parts->workers.push_back(std::move(site->worker));
    parts->storage_workers.push_back(std::move(site->storage));
    parts->ports.push_back(std::move(site->port));
  }

  {
    auto reader = StoreReader::open(db_path);
    if (!reader) return reader.error();
    BrainLoop* loop = parts->loop.get();
    parts->transfer_port = std::make_unique<SiteTransferPort>(clusters, s.state_dir + "/transfers",
                                                             s.state_dir);
    for (const auto& c : clusters) parts->transfer_port->site_joined(c, port_map[c.name]);
    parts->transfers = std::make_unique<TransferWorker>(
        clusters, *parts->transfer_port, std::move(*reader),
        [loop](BrainEvent e) { loop->post(std::move(e)); }, parts->clock);
  }

  if (!config.webhooks.empty()) {
    std::map<std::string, std::string> secrets;
    for (const WebhookSpec& w : config.webhooks) {
      auto value = read_secret_source_value("webhook " + w.name + "'s secret", w.secret);
      if (!value) return value.error();
      secrets[w.name] = std::move(*value);
    }
    auto reader = StoreReader::open(db_path);
    if (!reader) return reader.error();
    auto hooks = WebhookWorker::open(config.webhooks, std::move(secrets), std::move(*reader),
                                     s.state_dir + "/webhooks.db");
    if (!hooks) return hooks.error();
    parts->webhooks = std::move(*hooks);
  }

  ServerOptions http;
  http.lanes = api_lanes();
  // One read connection per handler thread at most: a request never waits for another's reads.
  std::size_t handler_threads = 0;
  for (const LaneOptions& lane : http.lanes)
    handler_threads += static_cast<std::size_t>(lane.threads);
  auto readers = std::make_unique<ReaderPool>([db_path] { return StoreReader::open(db_path); },
                                              handler_threads);
  parts->backend = std::make_unique<SchedulerBackend>(std::move(readers), *parts->loop, clusters,
                                                      port_map, parts->clock);
  parts->backend->set_secrets(parts->secrets.get());
  parts->backend->set_code(parts->code.get());
  if (!s.config_path.empty()) parts->backend->set_reload([p] { return p->reload(); });
  parts->backend->set_site_answers([p] {
    std::lock_guard<std::mutex> lock(p->sites_mu);
    std::map<std::string, std::int64_t> out;
    for (const auto& w : p->workers) out[w->cluster()] = w->last_answer_ms();
    return out;
  });
  parts->backend->set_add([p](const std::string& document, const std::string& source) {
    return p->add(document, source);
  });
  http.bind = bind;
  http.port = s.port.value_or(config.server.port);
  http.tls_cert_file = config.server.tls.cert;
  http.tls_key_file = config.server.tls.key;
  parts->bind = http.bind;
  parts->scheme = config.server.serves_tls() ? "https" : "http";
  GuardOptions guard;
  guard.hosts = answered_hosts(bind, config.server.hosts);
  guard.rate_limits = config.server.rate_limits;
  parts->api = std::make_unique<GuardedApi>(*parts->backend, *parts->access, std::move(guard),
                                            parts->code.get(), parts->pushed.get());
  // A workdir upload may be larger than any other request.
  http.body_limits = {{"PUT", kCodeUploadPrefix, kMaxCodeArchiveBytes}};
  const GuardedApi* api = parts->api.get();
  http.lane_of = [api](const HttpRequest& req) {
    return static_cast<std::size_t>(api->lane_of(req));
  };
  parts->http = std::make_unique<HttpServer>(
      http, [api](const HttpRequest& req) { return api->handle(req); });

  parts->loop->start();
  for (auto& w : parts->workers) w->start();
  for (auto& w : parts->storage_workers) w->start();
  parts->transfers->start();
  if (parts->webhooks) parts->webhooks->start();
  if (auto r = parts->http->start(); !r) return r.error();
  parts->pushed->mark_serving();
  return std::unique_ptr<Server>(new Server(std::move(parts)));
}

}  // namespace orch
