#pragma once
// A scripted ClusterPort: tests set what the site "has" and what it answers, then read what
// was asked of it. No processes, no threads, no time.

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler/cluster_port.h"

namespace orch::testing {

class FakeSite final : public ClusterPort {
 public:
  struct Run {
    LaunchRequest request;
    RunObservation obs;
    // The attempt's output as bytes, for read_output. When set, observe() reports its size as
    // next_offset (lines stay numbered by obs.new_lines): a run whose lines were read before a
    // restart has `output` and no new lines.
    std::string output;
  };

  bool down = false;  // every call answers unreachable
  std::vector<NodeInfo> inventory_nodes = {{"n0", 4, true, ""}};
  std::optional<Error> launch_error;          // the next launch fails with this
  RunPhase launch_phase = RunPhase::running;  // what a new run is observed as, until changed
  std::map<std::string, Run> runs;            // by token
  // launched: the tokens of launches that started a run; launch_calls: of every launch() call,
  // adopted ones included; found: of every find() call.
  std::vector<std::string> launched, launch_calls, cancelled, found;
  // Probes: what probe_nodes answers, and the requests it was given.
  Result<std::vector<ProbeResult>> probe_result = std::vector<ProbeResult>{};
  std::vector<ProbeRequest> probed;
  // Poll rounds: the tokens of each observe_many call, and how many times observe() itself was
  // called. `batch`: observe_many answers every token at once, as a provider that asks its site
  // one question per round (Slurm's one squeue); false: ClusterPort's default, one observe()
  // per token.
  bool batch = true;
  std::vector<std::vector<std::string>> observe_rounds;
  int observe_calls = 0;
  // What observing a token answers instead of its run (an unreadable file, a site that stops
  // answering halfway through a round).
  std::map<std::string, Error> observe_errors;
  // read_output calls: (token, offset, max_bytes).
  std::vector<std::tuple<std::string, std::uint64_t, std::size_t>> output_reads;
  // Storage: what manifest() answers for each path, and the requests it was given. A path not
  // scripted here gets ClusterPort's default (unsupported: the provider cannot list storage), so
  // tests that do not script storage see what they saw before.
  std::map<std::string, Result<Manifest>> manifests;
  std::vector<ManifestRequest> manifest_requests;
  // What remove_path() answers, the paths it was asked to delete, and each request whole.
  Result<void> remove_result = Ok{};
  std::vector<std::string> removed;
  std::vector<RemoveRequest> remove_requests;
  // The preflight (`cluster check`): what it answers, and how many times it was run.
  std::vector<PreflightCheck> preflight_checks;
  int preflight_calls = 0;

  Result<SiteInventory> inventory() override {
    if (down) return unreachable();
    return SiteInventory{inventory_nodes};
  }
  // Idempotent per token, as cluster_port.h asks: a token in `runs` is returned adopted.
  Result<LaunchResult> launch(const LaunchRequest& r) override {
    if (down) return unreachable();
    launch_calls.push_back(r.token);
    if (launch_error) return *std::exchange(launch_error, std::nullopt);
    if (auto it = runs.find(r.token); it != runs.end()) {
      LaunchResult existing{it->second.obs.site_job_id, {"n0"}};
      existing.adopted = true;
      return existing;
    }
    launched.push_back(r.token);
    runs[r.token] = Run{r, RunObservation{launch_phase, {}, "job-" + r.token, {"n0"}, {}, 0}};
    return LaunchResult{"job-" + r.token, {"n0"}};
  }
  Result<std::optional<LaunchResult>> find(const std::string& token) override {
    if (down) return unreachable();
    found.push_back(token);
    auto it = runs.find(token);
    if (it == runs.end()) return std::optional<LaunchResult>{};
    return std::optional<LaunchResult>{LaunchResult{it->second.obs.site_job_id, {"n0"}}};
  }
  Result<RunObservation> observe(const std::string& token, std::uint64_t offset) override {
    ++observe_calls;
    return answer(token, offset);
  }
  std::vector<Result<RunObservation>> observe_many(
      const std::vector<ObserveRequest>& requests) override {
    std::vector<std::string> tokens;
    for (const auto& r : requests) tokens.push_back(r.token);
    observe_rounds.push_back(std::move(tokens));
    if (!batch) return ClusterPort::observe_many(requests);
    if (down) return {unreachable()};
    std::vector<Result<RunObservation>> answers;
    for (const auto& r : requests) {
      answers.push_back(answer(r.token, r.output_offset));
      if (!answers.back() && answers.back().error().kind == ErrorKind::unreachable) break;
    }
    return answers;
  }
  Result<RunObservation> answer(const std::string& token, std::uint64_t offset) {
    if (down) return unreachable();
    if (auto e = observe_errors.find(token); e != observe_errors.end()) return e->second;
    auto it = runs.find(token);
    if (it == runs.end()) return RunObservation{};
    RunObservation o = it->second.obs;
    // Lines are numbered by offset: a caller that passes the offset it got sees each line once.
    o.new_lines.assign(
        it->second.obs.new_lines.begin() +
            static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(offset, o.new_lines.size())),
        it->second.obs.new_lines.end());
    o.next_offset =
        std::max<std::uint64_t>(it->second.obs.new_lines.size(), it->second.output.size());
    return o;
  }
  Result<void> cancel(const std::string& token) override {
    if (down) return unreachable();
    cancelled.push_back(token);
    return Ok{};
  }
  Result<std::string> read_output(const std::string& token, std::uint64_t offset,
                                  std::size_t max_bytes) override {
    if (down) return unreachable();
    output_reads.emplace_back(token, offset, max_bytes);
    auto it = runs.find(token);
    if (it == runs.end() || offset >= it->second.output.size()) return std::string();
    return it->second.output.substr(offset, max_bytes);
  }
  Result<std::vector<ProbeResult>> probe_nodes(const ProbeRequest& request) override {
    if (down) return unreachable();
    probed.push_back(request);
    return probe_result;
  }

  std::vector<PreflightCheck> preflight() override {
    ++preflight_calls;
    return preflight_checks;
  }
  Result<Manifest> manifest(const ManifestRequest& request) override {
    if (down) return unreachable();
    manifest_requests.push_back(request);
    auto it = manifests.find(request.path);
    if (it == manifests.end()) return ClusterPort::manifest(request);
    return it->second;
  }
  Result<void> remove_path(const RemoveRequest& request) override {
    if (down) return unreachable();
    removed.push_back(request.path);
    remove_requests.push_back(request);
    return remove_result;
  }

  void print(const std::string& token, const std::string& line) {
    runs[token].obs.new_lines.push_back(line);
  }
  void exit(const std::string& token, int code) {
    runs[token].obs.phase = RunPhase::exited;
    runs[token].obs.exit = ExitStatus{code, std::nullopt, "", false};
  }

 private:
  static Error unreachable() { return make_error(ErrorKind::unreachable, "fake site is down"); }
};

}  // namespace orch::testing
