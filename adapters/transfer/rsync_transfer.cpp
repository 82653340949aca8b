#include "adapters/transfer/rsync_transfer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "adapters/process/run_captured.h"
#include "adapters/transfer/login_endpoint.h"
#include "adapters/transfer/rsync_command.h"
#include "adapters/transfer/rsync_failure.h"
#include "adapters/transfer/rsync_run.h"
#include "adapters/transfer/transfer_route.h"

namespace orch {

using namespace transfer;  // NOLINT: this file is the transfer's own
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One rsync to run to completion (restarted as often as the cap changes): the relay has two.
struct RsyncTransferPort::Leg {
  std::string what;                                       // for messages: "alpha:/a -> beta:/b"
  std::function<Result<void>()> prepare;                  // before the first run; may be empty
  std::function<Result<RunCommand>(double cap)> command;  // the command at this cap
};

namespace {

const std::vector<std::string> kEnv = {"LC_ALL=C"};  // rsync's numbers as the parser reads them

std::string endpoint_text(const std::string& cluster, const std::string& path) {
  return cluster + ":" + path;
}

Result<void> make_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(ErrorKind::io, "cannot make directory " + dir + ": " + ec.message());
  return Ok{};
}

// A name no other orchestrator process (here or on another host) picks for a pid file.
std::string nonce() {
  static const std::string value = [] {
    std::random_device rd;
    std::stringstream ss;
    ss << std::hex << ::getpid() << "-" << rd() << rd();
    return ss.str();
  }();
  return value;
}

// The command that runs `remote_command` on a login node with the rsync it starts recorded in
// pid_file, and stopped through it.
RunCommand on_login_node(const SshEndpoint& login, std::vector<std::string> argv,
                         const std::string& pid_file, milliseconds grace) {
  RunCommand c;
  c.argv = std::move(argv);
  c.env = kEnv;
  c.stop_remote = [login, pid_file, grace] {
    auto stop = remote_stop_command(pid_file);
    if (!stop) return;
    auto ssh = ssh_command_argv(login, *stop);
    if (!ssh) return;
    // Best effort: an unreachable login node cannot be told; its rsync then ends when it finds
    // the connection gone.
    (void)process::run_captured(*ssh,
                                {.timeout = grace + milliseconds(login.connect_timeout_s * 1000),
                                 .grace = milliseconds(500)});
  };
  return c;
}

// Relay staging for one transfer: <work>/relay/<id>/data, with the request it belongs to
// recorded beside it; a stale copy of another request under the same id is removed first.
Result<std::string> relay_staging(const std::string& relay_dir, const TransferRequest& r) {
  std::stringstream want;
  want << endpoint_text(r.from.cluster, r.from.path) << "\n"
       << endpoint_text(r.to.cluster, r.to.path) << "\n"
       << (r.directory ? "directory" : "file") << "\n";
  const std::string marker = relay_dir + "/request";
  std::ifstream in(marker);
  std::stringstream have;
  have << in.rdbuf();
  std::error_code ec;
  if (have.str() != want.str()) {
    fs::remove_all(relay_dir, ec);
    if (auto m = make_directory(relay_dir); !m) return m.error();
    // Staged copies are the sites' data: readable by this user only.
    ::chmod(fs::path(relay_dir).parent_path().c_str(), 0700);
    ::chmod(relay_dir.c_str(), 0700);
    std::ofstream out(marker, std::ios::trunc);
    out << want.str();
    if (!out.flush()) return make_error(ErrorKind::io, "cannot write " + marker);
  }
  const std::string data = relay_dir + "/data";
  if (r.directory) {
    if (auto m = make_directory(data); !m) return m.error();
  }
  return data;
}

// dir as an absolute path without a trailing '/'.
std::string absolute_dir(const std::string& dir) {
  std::string path = fs::absolute(dir).lexically_normal().string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

RsyncTransferPort::RsyncTransferPort(const std::vector<ClusterSpec>& clusters,
                                     const std::string& work_dir)
    : RsyncTransferPort(clusters, work_dir, Options{}) {}

RsyncTransferPort::RsyncTransferPort(const std::vector<ClusterSpec>& clusters,
                                     const std::string& work_dir, Options options)
    : clusters_(clusters),
      work_dir_(absolute_dir(work_dir)),
      options_(options),
      logins_(std::make_unique<LoginEndpoints>(work_dir_ + "/known_hosts")) {}

RsyncTransferPort::~RsyncTransferPort() = default;

Result<std::vector<RsyncTransferPort::Leg>> RsyncTransferPort::legs_for(const RoutePlan& plan,
                                                                        const TransferRequest& r) {
  const std::string from = r.from.path;
  const std::string to = r.to.path;
  const bool dir = r.directory;
  const bool checksum = r.checksum;
  auto settings = [dir, checksum](double cap) { return RsyncSettings{dir, checksum, cap}; };
  const std::string what =
      endpoint_text(r.from.cluster, from) + " -> " + endpoint_text(r.to.cluster, to);
  const milliseconds grace = options_.stop_grace;
  auto pid_file = [this, id = r.id] {
    return "/tmp/orch-rsync-" + nonce() + "-" + std::to_string(id) + "-" +
           std::to_string(runs_.fetch_add(1)) + ".pid";
  };
  auto make_local_dir = [dir](const std::string& path) {
    return [path, dir]() { return make_directory(directory_to_create(path, dir)); };
  };

  std::vector<Leg> legs;
  switch (plan.kind) {
    case RouteKind::local:
      legs.push_back({what, make_local_dir(to), [=](double cap) -> Result<RunCommand> {
                        auto argv = local_copy_argv(settings(cap), from, to);
                        if (!argv) return argv.error();
                        return RunCommand{*argv, kEnv, {}};
                      }});
      break;
    case RouteKind::on_login_node:
    case RouteKind::pull_via_destination: {
      auto login = logins_->endpoint(plan.to);
      if (!login) return login.error();
      const bool pull = plan.kind == RouteKind::pull_via_destination;
      const int timeout = login->connect_timeout_s;
      const SshEndpoint peer = peer_endpoint(plan.peer, timeout);
      legs.push_back({what, {}, [=, login = *login](double cap) -> Result<RunCommand> {
                        const std::string pid = pid_file();
                        auto remote = pull
                                          ? remote_pull_command(settings(cap), peer, from, to, pid)
                                          : remote_local_copy_command(settings(cap), from, to, pid);
                        if (!remote) return remote.error();
                        auto argv = ssh_command_argv(login, *remote);
                        if (!argv) return argv.error();
                        return on_login_node(login, *argv, pid, grace);
                      }});
      break;
    }
    case RouteKind::pull_here: {
      auto source = logins_->endpoint(plan.from);
      if (!source) return source.error();
      legs.push_back(
          {what, make_local_dir(to), [=, src = *source](double cap) -> Result<RunCommand> {
             auto argv = pull_argv(settings(cap), src, from, to);
             if (!argv) return argv.error();
             return RunCommand{*argv, kEnv, {}};
           }});
      break;
    }
    case RouteKind::push_here: {
      auto destination = logins_->endpoint(plan.to);
      if (!destination) return destination.error();
      legs.push_back({what, {}, [=, dst = *destination](double cap) -> Result<RunCommand> {
                        auto argv = push_argv(settings(cap), from, dst, to);
                        if (!argv) return argv.error();
                        return RunCommand{*argv, kEnv, {}};
                      }});
      break;
    }
    case RouteKind::relay: {
      auto source = logins_->endpoint(plan.from);
      if (!source) return source.error();
      auto destination = logins_->endpoint(plan.to);
      if (!destination) return destination.error();
      const std::string relay_dir = work_dir_ + "/relay/" + std::to_string(r.id);
      const std::string data = relay_dir + "/data";
      const std::string here = "orchestrator:" + data;
      legs.push_back({endpoint_text(r.from.cluster, from) + " -> " + here,
                      [relay_dir, r]() -> Result<void> {
                        auto staged = relay_staging(relay_dir, r);
                        if (!staged) return staged.error();
                        return Ok{};
                      },
                      [=, src = *source](double cap) -> Result<RunCommand> {
                        auto argv = pull_argv(settings(cap), src, from, data);
                        if (!argv) return argv.error();
                        return RunCommand{*argv, kEnv, {}};
                      }});
      legs.push_back({here + " -> " + endpoint_text(r.to.cluster, to),
                      {},
                      [=, dst = *destination](double cap) -> Result<RunCommand> {
                        auto argv = push_argv(settings(cap), data, dst, to);
                        if (!argv) return argv.error();
                        return RunCommand{*argv, kEnv, {}};
                      }});
      break;
    }
  }
  return legs;
}

Result<TransferOutcome> RsyncTransferPort::run(const TransferRequest& request,
                                               TransferControl& control) {
  const auto started = Clock::now();
  auto plan = plan_route(clusters_.snapshot(), request);
  if (!plan) return plan.error();
  auto legs = legs_for(*plan, request);
  if (!legs) return legs.error();

  TransferOutcome outcome;
  outcome.route = plan->name;
  const std::uint64_t total = request.bytes_hint * legs->size();
  const std::string context = "transfer " + std::to_string(request.id) + " (" + plan->name;
  auto cap_now = [&] { return effective_cap(control.cap_bytes_per_s(), plan->from, plan->to); };
  Clock::time_point last_progress = Clock::now() - options_.progress_every;

  for (std::size_t i = 0; i < legs->size(); ++i) {
    const Leg& leg = (*legs)[i];
    if (leg.prepare) {
      if (auto p = leg.prepare(); !p) return p.error();
    }
    for (;;) {
      if (control.stop_requested()) {
        return make_error(ErrorKind::conflict, context + "): stopped");
      }
      const double cap = cap_now();
      const auto kib = bwlimit_kib(cap);
      auto command = leg.command(cap);
      if (!command) return command.error();

      RunWatch watch;
      watch.stall_timeout = options_.stall_timeout;
      watch.stop_grace = options_.stop_grace;
      watch.progress_every = options_.progress_every;
      watch.last_progress = &last_progress;
      watch.restart_check_every = options_.cap_check_every;
      watch.stop = [&] { return control.stop_requested(); };
      watch.restart = [&] { return bwlimit_kib(cap_now()) != kib; };
      watch.progress = [&](const RsyncProgressLine& line) {
        TransferProgress p;
        p.bytes_done = outcome.bytes + line.bytes;
        p.bytes_total = total;
        p.rate_bytes_per_s = line.rate_bytes_per_s;
        p.percent = total > 0
                        ? static_cast<int>(std::min<std::uint64_t>(100, p.bytes_done * 100 / total))
                        : static_cast<int>((i * 100 + static_cast<std::size_t>(line.percent)) /
                                           legs->size());
        p.cap_bytes_per_s = cap;
        p.route = plan->name;
        control.progress(p);
      };

      auto ran = run_rsync(*command, watch);
      if (!ran) return ran.error();
      outcome.bytes += ran->bytes;
      const std::string where = context + ", " + leg.what + ")";
      if (ran->end == RunEnd::stopped) {
        return make_error(ErrorKind::conflict, where + ": stopped after " +
                                                   std::to_string(outcome.bytes) +
                                                   " bytes; running it again resumes");
      }
      if (ran->end == RunEnd::restart) {
        ++outcome.restarts;
        continue;
      }
      if (ran->end == RunEnd::stalled) {
        return make_error(
            ErrorKind::io,
            where + ": rsync printed nothing for " +
                std::to_string(options_.stall_timeout.count() / 1000) + " s and was killed" +
                (last_lines(ran->err, 6).empty() ? "" : ": " + last_lines(ran->err, 6)));
      }
      if (ran->exit.exit_code != 0) return rsync_failure(where, ran->exit, ran->err);
      break;
    }
  }
  if (plan->kind == RouteKind::relay) {
    std::error_code ec;
    fs::remove_all(work_dir_ + "/relay/" + std::to_string(request.id), ec);
  }
  outcome.seconds = std::chrono::duration<double>(Clock::now() - started).count();

  TransferProgress done;
  done.bytes_done = outcome.bytes;
  done.bytes_total = total > 0 ? total : outcome.bytes;
  done.percent = 100;
  done.cap_bytes_per_s = cap_now();
  done.route = plan->name;
  control.progress(done);
  return outcome;
}

}  // namespace orch
