#include "examples/toy_trainer/rendezvous.h"

#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "examples/toy_trainer/wire.h"

namespace toy {
namespace {

using net::Clock;
using net::Deadline;

constexpr auto kSlice = std::chrono::milliseconds(200);  // how often `stop` is looked at
constexpr auto kConnectTry = std::chrono::seconds(2);    // one connection attempt at most
constexpr auto kRetryPause = std::chrono::milliseconds(100);
constexpr auto kHelloWait = std::chrono::seconds(5);  // a connection's hello at most

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

Deadline soonest(Deadline a, Clock::duration from_now) {
  return std::min(a, Clock::now() + from_now);
}

void pause_briefly() {
  timespec ts{0, static_cast<long>(std::chrono::nanoseconds(kRetryPause).count())};
  ::nanosleep(&ts, nullptr);  // a signal cuts it short; the caller looks at `stop`
}

// Rank 0: the listening socket, retrying while the port is still held (a dead attempt's rank).
net::Fd listen_until(int port, int backlog, Deadline deadline,
                     const volatile std::sig_atomic_t& stop, std::string& error) {
  for (;;) {
    net::Fd s = net::listen_tcp(port, backlog, error);
    if (s || errno != EADDRINUSE || stop || Clock::now() >= deadline) return s;
    pause_briefly();
  }
}

// Rank 0: reads a new connection's hello and admits its rank. A connection that sends no
// valid hello is dropped (false, no error); a hello that breaks the gang (another world size,
// a rank out of range or seen twice) is fatal: false with `error` set.
bool admit(Group& g, net::Fd conn, const std::string& from, Deadline deadline, std::string& error) {
  wire::FrameReader hello;
  const net::IoResult r = hello.read(conn.get(), soonest(deadline, kHelloWait));
  const wire::Header& h = hello.header();
  if (!r.ok() || h.kind != wire::Kind::hello) {
    std::fprintf(stderr, "toy_trainer: rank 0: ignoring a connection from %s: %s\n", from.c_str(),
                 !r.ok() ? (hello.problem().empty() ? net::describe(r) : hello.problem()).c_str()
                         : "its first frame is not a hello");
    return false;
  }
  const std::string who = "rank " + std::to_string(h.rank) + " (from " + from + ")";
  if (h.world != g.world) {
    error = who + " says the world has " + std::to_string(h.world) + " ranks, rank 0 says " +
            std::to_string(g.world);
  } else if (h.rank <= 0 || h.rank >= g.world) {
    error = who + " is not a rank of a world of " + std::to_string(g.world);
  } else if (g.peers[h.rank]) {
    error = who + " arrived twice";
  }
  if (!error.empty()) {
    wire::send_abort(conn.get(), 0, error);
    return false;
  }
  g.nodes[h.rank] = hello.text().empty() ? "?" : hello.text();
  g.peers[h.rank] = std::move(conn);
  return true;
}

std::string missing_ranks(const Group& g) {
  std::string out;
  for (int r = 1; r < g.world; ++r) {
    if (!g.peers[r]) out += (out.empty() ? "" : ", ") + std::to_string(r);
  }
  return out;
}

// Rank 0's side: accept until every other rank has said hello, then welcome them all.
Met host(const LaunchEnv& env, double timeout_s, Deadline deadline,
         const volatile std::sig_atomic_t& stop, Group& g, std::string& error) {
  net::Fd lst = listen_until(env.master_port, g.world, deadline, stop, error);
  if (!lst) return stop ? Met::interrupted : Met::failed;
  int arrived = 0;
  while (arrived < g.world - 1) {
    if (stop) return Met::interrupted;
    if (Clock::now() >= deadline) {
      error = "only " + std::to_string(arrived) + " of " + std::to_string(g.world - 1) +
              " ranks arrived at port " + std::to_string(env.master_port) + " within " +
              seconds(timeout_s) + " (--rendezvous-timeout-s); missing ranks " + missing_ranks(g);
      abort_peers(g, error);
      return Met::failed;
    }
    std::vector<pollfd> p = {{lst.get(), POLLIN, 0}};
    if (net::poll_until(p, soonest(deadline, kSlice)) <= 0) continue;
    std::string from;
    net::Fd conn = net::accept_tcp(lst.get(), from);
    if (!conn) continue;
    if (admit(g, std::move(conn), from, deadline, error)) {
      ++arrived;
    } else if (!error.empty()) {
      abort_peers(g, error);
      return Met::failed;
    }
  }
  for (int r = 1; r < g.world; ++r) {
    wire::Header h;
    h.kind = wire::Kind::welcome;
    h.world = g.world;
    if (auto res = wire::send(g.peers[r].get(), h, nullptr, 0, deadline); !res.ok()) {
      error = "rank " + std::to_string(r) + " " + net::describe(res) + " during the rendezvous";
      abort_peers(g, error);
      return Met::failed;
    }
  }
  return Met::ok;
}

// A rank > 0: connect to the master, retrying until the deadline.
net::Fd reach_master(const LaunchEnv& env, double timeout_s, Deadline deadline,
                     const volatile std::sig_atomic_t& stop, std::string& error) {
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  std::string last;
  for (;;) {
    net::Fd s =
        net::connect_tcp(env.master_addr, env.master_port, soonest(deadline, kConnectTry), last);
    if (s || stop) return s;
    if (Clock::now() >= deadline) {
      error = "cannot reach the master at " + where + " within " + seconds(timeout_s) +
              " (--rendezvous-timeout-s): " + last;
      return {};
    }
    pause_briefly();
  }
}

// A rank > 0's side: hello to rank 0, then wait for its welcome.
Met join(const LaunchEnv& env, double timeout_s, Deadline deadline,
         const volatile std::sig_atomic_t& stop, Group& g, std::string& error) {
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  net::Fd s = reach_master(env, timeout_s, deadline, stop, error);
  if (!s) return stop ? Met::interrupted : Met::failed;
  wire::Header h;
  h.kind = wire::Kind::hello;
  h.rank = g.rank;
  h.world = g.world;
  const std::string node = env.report_node.substr(0, wire::kMaxText);
  net::IoResult r = wire::send(s.get(), h, node.data(), node.size(), deadline);
  wire::FrameReader welcome;
  while (r.ok() && !welcome.done() && !stop) {
    r = welcome.read(s.get(), soonest(deadline, kSlice));
    if (r.status == net::Io::timeout && Clock::now() < deadline) r = {};
  }
  if (stop && !welcome.done()) return Met::interrupted;
  const wire::Header& w = welcome.header();
  if (r.status == net::Io::timeout) {
    error = "connected to the master at " + where + " but not every rank arrived within " +
            seconds(timeout_s) + " (--rendezvous-timeout-s)";
  } else if (!r.ok()) {
    error = "rank 0 at " + where + " " +
            (welcome.problem().empty() ? net::describe(r) : welcome.problem()) +
            " during the rendezvous";
  } else if (w.kind == wire::Kind::abort) {
    error = "rank 0 at " + where + " aborted the job: " + welcome.text();
  } else if (w.kind != wire::Kind::welcome || w.world != g.world) {
    error = "rank 0 at " + where + " answered with something other than a welcome to a world of " +
            std::to_string(g.world);
  }
  if (!error.empty()) return Met::failed;
  g.peers.push_back(std::move(s));
  return Met::ok;
}

}  // namespace

Met rendezvous(const LaunchEnv& env, double timeout_s, const volatile std::sig_atomic_t& stop,
               Group& out, std::string& error) {
  out = Group{};
  out.rank = env.rank;
  out.world = env.world;
  if (env.world == 1) return Met::ok;
  const Deadline deadline = net::deadline_in(timeout_s);
  if (env.rank != 0) return join(env, timeout_s, deadline, stop, out, error);
  out.peers.resize(static_cast<std::size_t>(env.world));
  out.nodes.resize(static_cast<std::size_t>(env.world));
  out.nodes[0] = env.report_node;
  return host(env, timeout_s, deadline, stop, out, error);
}

void abort_peers(Group& g, const std::string& why) {
  if (g.rank != 0) return;
  for (auto& p : g.peers) {
    if (!p) continue;
    wire::send_abort(p.get(), 0, why);
    ::shutdown(p.get(), SHUT_WR);  // the abort goes out before the FIN, and the FIN before exit
  }
}

}  // namespace toy
