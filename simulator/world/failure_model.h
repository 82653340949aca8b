#pragma once
// When simulated nodes fail, and why (issue 19). Each node fails by a renewal process: it runs
// for a time drawn from the cluster's failure law, fails, is repaired as new, and runs again.
// A lemon node has a multiplier on its failure rate: its mean time between failures is the
// law's mean divided by it. The cause of each failure is drawn from a mix (by default the one
// Meta reported for Llama 3's pre-training). FailureTrace merges the nodes' processes into one
// stream of failures in time order.
//
// Deterministic: the same seed gives the same trace. Each node draws from a stream of its own
// (sim_random.h), so its failures do not depend on the other nodes or on what a policy does.

#include <cstddef>
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "scheduler/common/result.h"
#include "simulator/world/sim_random.h"

namespace orch::sim {

// The time between a node's failures: exponential (a constant rate) or Weibull (shape below 1:
// failures come early, as in infant mortality; above 1: wear-out). Both given by their mean.
struct FailureLaw {
  enum class Kind { exponential, weibull };
  Kind kind = Kind::exponential;
  double mtbf_s = 0;  // the mean time between failures of one node, seconds (> 0)
  double shape = 1;   // Weibull only (> 0); 1 is the exponential
  // false (the default): the fleet has run a long time when the simulation starts, each node at
  // an age of its own, so failures come at the renewal process's steady rate from time 0 (the
  // first failure of a node is drawn from the forward recurrence time, whose density is
  // S(t)/mean; for a Weibull, t = scale x P^-1(1/shape, U)^(1/shape)). true: every node is new
  // at time 0, so a Weibull of shape below 1 makes the whole fleet's infant mortality at once.
  // The exponential is memoryless: the same either way.
  bool fresh_nodes = false;
  // Failures of a job itself, whatever its size (software, the network between its nodes), at
  // this mean time from each of its runs' grants (SimJob::mtbf_s); 0: none. Not a node's: the
  // trace does not use it; the scenario gives it to its job.
  double job_mtbf_s = 0;

  // A law whose mean, shape or kind cannot be drawn from: invalid, naming what is wrong.
  Result<void> check() const;
  // The Weibull scale that gives mean mtbf_s: mtbf_s / Gamma(1 + 1/shape).
  double weibull_scale() const;
};

// A cause of failure and its share of all failures (shares need not sum to 1: they are weights).
struct FailureCause {
  std::string name;
  double share = 0;
};

// Unexpected interruptions of Llama 3 405B's pre-training by root cause, as reported in "The
// Llama 3 Herd of Models" (Meta, 2024, table 5; 419 interruptions in 54 days on 16,384 H100s):
// faulty GPU 30.1%, GPU HBM3 memory 17.2%, software bug 12.9%, network switch or cable 8.4%,
// host maintenance 7.6%, GPU SRAM memory 4.5%, GPU system processor 4.1%, and the table's
// smaller causes (NIC, NCCL watchdog, silent data corruption, thermal, SSD, power, CPU ...)
// together as "other", the rest to 100%.
const std::vector<FailureCause>& llama3_cause_mix();

// Draws a cause by share. Invalid when empty, when a share is negative or not finite, or when
// they sum to 0.
class CauseMix {
 public:
  static Result<CauseMix> make(std::vector<FailureCause> causes);
  // The cause for a uniform draw u in (0, 1).
  const std::string& pick(double u) const;
  const std::vector<FailureCause>& causes() const { return causes_; }

 private:
  std::vector<FailureCause> causes_;
  std::vector<double> cumulative_;  // cumulative shares, normalised to end at 1
};

// One simulated node, as the trace knows it.
struct SimNodeSpec {
  double rate_multiplier = 1;  // > 1: a lemon (fails this many times as often)
};

struct NodeFailure {
  double at_s = 0;                     // seconds since the start
  std::size_t node = 0;                // index into the trace's nodes
  const std::string* cause = nullptr;  // into the mix, which outlives the trace
};

class FailureTrace {
 public:
  // Every node in steady state at time 0, or new when the law says fresh_nodes. Invalid: a bad
  // law, a rate multiplier not above 0.
  static Result<FailureTrace> make(std::uint64_t seed, const FailureLaw& law,
                                   std::vector<SimNodeSpec> nodes, const CauseMix* causes);

  // The time of the next failure of any node.
  double next_at() const { return heap_.top().at_s; }
  // The next failure of any node, in time order (ties: the lower node index first); that node
  // is repaired at once and its following failure drawn.
  NodeFailure next();
  std::size_t nodes() const { return nodes_.size(); }

 private:
  struct Pending {
    double at_s;
    std::size_t node;
    bool operator>(const Pending& o) const {
      return at_s != o.at_s ? at_s > o.at_s : node > o.node;
    }
  };
  FailureTrace(std::uint64_t seed, const FailureLaw& law, std::vector<SimNodeSpec> nodes,
               const CauseMix* causes);
  double draw_gap(std::size_t node);
  // The first gap: draw_gap for new nodes (and the exponential), else the forward recurrence.
  double draw_first_gap(std::size_t node);

  FailureLaw law_;
  double weibull_scale_ = 0;
  std::vector<SimNodeSpec> nodes_;
  std::vector<SimRandom> streams_;  // one per node: its gaps and its causes
  const CauseMix* causes_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> heap_;
};

}  // namespace orch::sim
