#pragma once
// The toy trainer's all-reduce: a star around rank 0 over the rendezvous' TCP connections.
// Every rank sends its tensor to rank 0; rank 0 adds them in rank order and sends the sum back,
// so every rank ends with the same bytes. Every wait has the collective deadline
// (--collective-timeout-s, like NCCL's watchdog): a peer that died shows at once (EOF,
// ECONNRESET), a peer that is alive but silent when the deadline passes. When rank 0 fails it
// tells the other ranks why (an abort frame), so each of them can name the rank that failed.

#include <cstdint>
#include <string>
#include <vector>

#include "examples/toy_trainer/rendezvous.h"

namespace toy {

// What one rank brings to a step's all-reduce besides its tensor.
struct Contribution {
  std::int64_t step = 0;
  double loss = 0;
  double compute_s = 0;  // time from the step's start until this rank was ready to reduce
  bool stop = false;     // this rank got SIGTERM: the gang stops after this step
};

// What every rank gets back besides the summed tensor.
struct Reduced {
  double loss_sum = 0;            // the ranks' losses added
  bool stop = false;              // some rank asked to stop
  std::vector<double> compute_s;  // rank 0 only: each rank's compute time, by rank
};

class AllReduce {
 public:
  // floats: the tensor's length, the same on every rank.
  AllReduce(Group& group, double timeout_s, std::size_t floats);

  // Replaces data[0..floats) with its sum over all ranks. false: `error` names the peer and
  // what happened ("rank 1 closed the connection", a watchdog timeout naming the silent ranks),
  // and rank 0 has sent the others an abort saying so.
  bool run(const Contribution& mine, float* data, Reduced& out, std::string& error);

 private:
  bool gather(const Contribution& mine, net::Deadline deadline, Reduced& out, std::string& error);
  bool scatter(const Contribution& mine, const float* data, const Reduced& out,
               net::Deadline deadline, std::string& error);
  bool through_root(const Contribution& mine, float* data, net::Deadline deadline, Reduced& out,
                    std::string& error);
  std::string timed_out(const char* what, const std::vector<int>& silent) const;

  Group& g_;
  double timeout_s_;
  std::size_t floats_;
  std::vector<std::vector<float>> inbox_;  // rank 0: each peer's tensor of this step
};

}  // namespace toy
