#pragma once
// One cluster of the simulated world (sim_world.h) behind the ClusterPort every provider
// implements, so that the real site workers drive it as they drive Slurm or local processes.
// It answers at the world's current time; a site in an outage or a network blip answers
// ErrorKind::unreachable, as a real one that does not answer.
//
// Thread safety: every call takes the world's lock (the simulation steps everything on one
// thread, but the ClusterPort contract allows calls from several).

#include <cstddef>
#include <mutex>
#include <string>

#include "scheduler/cluster_port.h"
#include "simulator/world/sim_world.h"

namespace orch::sim {

class SimSite final : public ClusterPort {
 public:
  // `epoch_ms`: the wall-clock time of the simulation's second 0 (the brain's clock starts
  // there), for the times a site reports.
  SimSite(SimWorld& world, std::mutex& lock, std::size_t cluster, std::int64_t epoch_ms);

  Result<SiteInventory> inventory() override;
  Result<LaunchResult> launch(const LaunchRequest& request) override;
  Result<std::optional<LaunchResult>> find(const std::string& token) override;
  Result<RunObservation> observe(const std::string& token, std::uint64_t output_offset) override;
  Result<void> cancel(const std::string& token) override;
  // A save request: the simulated job saves at its own steps only, so this is accepted and
  // changes nothing (the brain then stops the attempt after its grace, which the job obeys).
  Result<void> signal(const std::string& token, const std::string& signal) override;
  Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) override;
  Result<Manifest> manifest(const ManifestRequest& request) override;
  Result<void> remove_path(const RemoveRequest& request) override;
  // Every probe passes (the simulated nodes that are up are healthy when not failing).
  Result<std::vector<ProbeResult>> probe_nodes(const ProbeRequest& request) override;

 private:
  Error silent() const;

  SimWorld& world_;
  std::mutex& lock_;
  std::size_t cluster_;
  std::int64_t epoch_ms_;
};

}  // namespace orch::sim
