#include "examples/toy_trainer/allreduce.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "examples/toy_trainer/wire.h"

namespace toy {
namespace {

// Where drive() stopped short: the rank whose transfer failed, or -1 for the deadline (or a
// failed poll) with the ranks not yet done left in `pending`.
struct Stalled {
  int rank = -1;
  net::IoResult res;
};

// Advances the transfer of every pending rank whose socket is ready for `events` until all
// are done. step(rank, done) moves what it can and sets done when that rank's part is over.
template <typename Step>
Stalled drive(const Group& g, std::vector<int>& pending, short events, net::Deadline deadline,
              Step step) {
  while (!pending.empty()) {
    std::vector<pollfd> fds;
    for (int r : pending) fds.push_back({g.peers[r].get(), events, 0});
    const int n = net::poll_until(fds, deadline);
    if (n == 0) return {-1, {net::Io::timeout, 0}};
    if (n < 0) return {-1, {net::Io::error, errno}};
    std::vector<int> left;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      bool done = false;
      if (fds[i].revents != 0) {
        if (net::IoResult res = step(pending[i], done); !res.ok()) return {pending[i], res};
      }
      if (!done) left.push_back(pending[i]);
    }
    pending = std::move(left);
  }
  return {};
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  return out;
}

std::string peer_failed(int rank, const net::IoResult& res, const std::string& problem) {
  const std::string who = "rank " + std::to_string(rank);
  if (res.status == net::Io::error && res.err == EPROTO && !problem.empty()) {
    return who + " sent a bad frame: " + problem;
  }
  if (res.status == net::Io::error && res.err != EPIPE) {
    return "connection to " + who + " failed: " + std::strerror(res.err);
  }
  return who + " " + net::describe(res);  // "rank 1 closed the connection"
}

// A data frame from `rank` for this step, or why not.
bool check_data(const wire::Header& h, int rank, std::int64_t step, std::string& error) {
  const std::string who = "rank " + std::to_string(rank);
  if (h.kind == wire::Kind::abort) {
    error = who + " aborted the job";
  } else if (h.kind != wire::Kind::data || h.rank != rank) {
    error = who + " sent an unexpected frame";
  } else if (h.step != step) {
    error = who + " is at step " + std::to_string(h.step) + ", this rank at step " +
            std::to_string(step) + " (did the ranks resume from different checkpoints?)";
  }
  return error.empty();
}

}  // namespace

AllReduce::AllReduce(Group& group, double timeout_s, std::size_t floats)
    : g_(group), timeout_s_(timeout_s), floats_(floats) {
  if (g_.rank == 0) inbox_.assign(static_cast<std::size_t>(g_.world), std::vector<float>(floats));
}

std::string AllReduce::timed_out(const char* what, const std::vector<int>& silent) const {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g s", timeout_s_);
  return std::string("Watchdog caught collective operation timeout: ran for ") + secs +
         " (--collective-timeout-s) " + what + " " + rank_list(silent);
}

bool AllReduce::run(const Contribution& mine, float* data, Reduced& out, std::string& error) {
  const net::Deadline deadline = net::deadline_in(timeout_s_);
  out = Reduced{};
  if (g_.rank != 0) return through_root(mine, data, deadline, out, error);
  bool ok = gather(mine, deadline, out, error);
  if (ok) {
    for (int r = 1; r < g_.world; ++r) {
      const float* in = inbox_[r].data();
      for (std::size_t i = 0; i < floats_; ++i) data[i] += in[i];
    }
    ok = scatter(mine, data, out, deadline, error);
  }
  if (!ok) abort_peers(g_, error);
  return ok;
}

// Rank 0: every peer's frame of this step, read as the sockets deliver them.
bool AllReduce::gather(const Contribution& mine, net::Deadline deadline, Reduced& out,
                       std::string& error) {
  const std::size_t bytes = floats_ * sizeof(float);
  std::vector<wire::FrameReader> readers(static_cast<std::size_t>(g_.world));
  std::vector<int> pending;
  for (int r = 1; r < g_.world; ++r) {
    readers[r] = wire::FrameReader(inbox_[r].data(), bytes);
    pending.push_back(r);
  }
  const Stalled s = drive(g_, pending, POLLIN, deadline, [&](int r, bool& done) {
    const net::IoResult res = readers[r].pump(g_.peers[r].get());
    done = res.ok() && readers[r].done();
    return res;
  });
  if (s.rank >= 0) {
    error = peer_failed(s.rank, s.res, readers[s.rank].problem());
    return false;
  }
  if (!pending.empty()) {
    error = s.res.status == net::Io::timeout ? timed_out("with no tensor from", pending)
                                             : std::string("poll: ") + std::strerror(s.res.err);
    return false;
  }
  out.loss_sum = mine.loss;
  out.stop = mine.stop;
  out.compute_s.assign(static_cast<std::size_t>(g_.world), mine.compute_s);
  for (int r = 1; r < g_.world; ++r) {
    const wire::Header& h = readers[r].header();
    if (!check_data(h, r, mine.step, error)) return false;
    out.loss_sum += h.loss;
    out.stop = out.stop || (h.flags & wire::kStopFlag) != 0;
    out.compute_s[r] = h.compute_s;
  }
  return true;
}

// Rank 0: the sum to every peer at once, so one slow reader does not hold up the others.
bool AllReduce::scatter(const Contribution& mine, const float* data, const Reduced& out,
                        net::Deadline deadline, std::string& error) {
  const std::size_t bytes = floats_ * sizeof(float);
  wire::Header h;
  h.kind = wire::Kind::data;
  h.world = g_.world;
  h.step = mine.step;
  h.loss = out.loss_sum;
  h.flags = out.stop ? wire::kStopFlag : 0;
  h.payload_bytes = bytes;
  std::vector<std::size_t> head(static_cast<std::size_t>(g_.world)), body(head.size());
  std::vector<int> pending;
  for (int r = 1; r < g_.world; ++r) pending.push_back(r);
  const Stalled s = drive(g_, pending, POLLOUT, deadline, [&](int r, bool& done) {
    const int fd = g_.peers[r].get();
    net::IoResult res = net::write_some(fd, &h, sizeof h, head[r]);
    if (res.ok() && head[r] == sizeof h) res = net::write_some(fd, data, bytes, body[r]);
    done = res.ok() && body[r] == bytes;
    return res;
  });
  if (s.rank >= 0) {
    error = peer_failed(s.rank, s.res, "");
  } else if (!pending.empty()) {
    error = s.res.status == net::Io::timeout ? timed_out("with the sum not taken by", pending)
                                             : std::string("poll: ") + std::strerror(s.res.err);
  }
  return error.empty();
}

// A rank > 0: its frame to rank 0, then the sum (or rank 0's abort) back.
bool AllReduce::through_root(const Contribution& mine, float* data, net::Deadline deadline,
                             Reduced& out, std::string& error) {
  const int fd = g_.peers[0].get();
  const std::size_t bytes = floats_ * sizeof(float);
  wire::Header h;
  h.kind = wire::Kind::data;
  h.rank = g_.rank;
  h.world = g_.world;
  h.step = mine.step;
  h.compute_s = mine.compute_s;
  h.loss = mine.loss;
  h.flags = mine.stop ? wire::kStopFlag : 0;
  wire::FrameReader reply(data, bytes);
  net::IoResult res = wire::send(fd, h, data, bytes, deadline);
  if (!res.ok() && res.status != net::Io::timeout) {
    // Rank 0 may have said why it went away before it closed: read that rather than guess.
    wire::FrameReader late;
    if (late.read(fd, net::deadline_in(0.2)).ok() && late.header().kind == wire::Kind::abort) {
      error = "rank 0 aborted the job: " + late.text();
      return false;
    }
  }
  if (res.ok()) res = reply.read(fd, deadline);
  if (res.status == net::Io::timeout) {
    error = timed_out("with no sum from", {0});
  } else if (!res.ok()) {
    error = peer_failed(0, res, reply.problem());
  } else if (reply.header().kind == wire::Kind::abort) {
    error = "rank 0 aborted the job: " + reply.text();
  } else if (check_data(reply.header(), 0, mine.step, error)) {
    out.loss_sum = reply.header().loss;
    out.stop = (reply.header().flags & wire::kStopFlag) != 0;
  }
  return error.empty();
}

}  // namespace toy
