// LocalSite on a real GPU box (issue 42, gpu_slots.h): which of the machine's devices a launch
// gets, what the site's live runs hold (from their request.json, so a restarted server sees the
// same), and the machine's GPU count against the site's.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <iostream>

#include "adapters/local/local_site.h"
#include "scheduler/common/clock.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

// How long nvidia-smi may take to list the devices.
constexpr std::chrono::milliseconds kNvidiaSmiTimeout{10'000};

// Whether any task of the run has a live agent (task 0 keeps the run's own lock; tasks r >= 1
// live under tasks/<r>/).
Result<bool> run_alive(const local::RunPaths& paths) {
  auto alive = local::agent_alive(paths.lock);
  if (!alive || *alive) return alive;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(paths.dir + "/tasks", ec)) {
    const std::string name = entry.path().filename().string();
    const bool rank =
        !name.empty() && name.size() <= 6 &&
        std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (!rank) continue;
    auto task = local::agent_alive(local::task_paths(paths, std::stoi(name)).lock);
    if (!task || *task) return task;
  }
  return false;
}

// "0,1 by orch-7-1-a; 2 by orch-8-1-b": who holds which of `devices`.
std::string holders(const std::vector<int>& devices, const local::HeldGpus& held) {
  std::map<std::string, std::vector<int>> by_run;
  for (int d : devices) {
    if (auto h = held.find(d); h != held.end()) by_run[h->second].push_back(d);
  }
  std::string out;
  for (const auto& [token, ds] : by_run) {
    out += (out.empty() ? "" : "; ") + local::device_list(ds) + " by " + token;
  }
  return out;
}

}  // namespace

bool LocalSite::assigns_gpus() const {
  return options_.accelerator != local::kCpuSlot;
}

Result<local::HeldGpus> LocalSite::held_gpus() const {
  local::HeldGpus held;
  const std::string runs = local::runs_dir(options_.root);
  if (!local::path_exists(runs)) return held;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(runs, ec)) {
    const std::string token = entry.path().filename().string();
    if (!entry.is_directory() || !local::check_token(token)) continue;
    const local::RunPaths paths = local::run_paths(options_.root, token);
    auto live = run_alive(paths);
    if (!live) return live.error();
    if (!*live) continue;
    auto stored = stored_request(paths);
    if (!stored) {
      // A live run whose devices cannot be read may hold any of them: nothing is given out
      // rather than shared.
      return make_error(ErrorKind::conflict, "site " + options_.name + ": run " + token +
                                                 " is alive but its GPUs cannot be read (" +
                                                 stored.error().message +
                                                 "); no GPU is given out until it ends");
    }
    for (const auto& [node, devices] : stored->gpus) {
      for (int d : devices) held.emplace(d, token);
    }
  }
  if (ec) return make_error(ErrorKind::io, "cannot list " + runs + ": " + ec.message());
  return held;
}

Error LocalSite::no_free_gpus(const LaunchRequest& request, const local::HeldGpus& held) const {
  const int total = options_.nodes * options_.gpus_per_node;
  const std::string wants = "launch " + request.token + " needs " + std::to_string(request.nodes) +
                            " node(s) x " + std::to_string(request.gpus_per_node) + " GPU(s)";
  if (request.gpus_per_node > options_.gpus_per_node) {
    return make_error(ErrorKind::invalid, "site " + options_.name + ": " + wants +
                                              ", but its nodes have " +
                                              std::to_string(options_.gpus_per_node) + " each");
  }
  std::vector<int> all;
  int free = 0;
  for (int d = 0; d < total; ++d) {
    all.push_back(d);
    free += held.count(d) == 0 ? 1 : 0;
  }
  return make_error(ErrorKind::conflict,
                    "site " + options_.name + ": " + wants + " and only " + std::to_string(free) +
                        " of its " + std::to_string(total) +
                        " GPUs are free (held: " + holders(all, held) +
                        "); GPUs are never shared, so it is not started until those runs end");
}

Result<local::StoredRequest> LocalSite::place(const LaunchRequest& request) const {
  local::StoredRequest run;
  run.request = request;
  run.launched_at_ms = SystemClock().now_ms();
  auto nodes = assign_nodes(request);
  if (!nodes) return nodes.error();
  run.nodes = std::move(*nodes);
  if (!assigns_gpus()) return run;
  auto held = held_gpus();
  if (!held) return held.error();
  const local::HeldGpus before = *held;
  if (request.gpus_per_node > options_.gpus_per_node) return no_free_gpus(request, before);
  const std::vector<std::string> names = node_names();
  for (const std::string& node : run.nodes) {
    const auto index = std::find(names.begin(), names.end(), node) - names.begin();
    auto devices = local::take_devices(static_cast<int>(index), options_.gpus_per_node,
                                       options_.nodes * options_.gpus_per_node,
                                       request.gpus_per_node, request.token, *held);
    if (!devices) return no_free_gpus(request, before);
    run.gpus[node] = std::move(*devices);
  }
  return run;
}

void LocalSite::note_replaced_devices(const local::StoredRequest& run) const {
  if (!assigns_gpus()) return;
  const LaunchRequest& r = run.request;
  auto own = r.env.find(local::kCudaVisibleDevices);
  const bool secret = r.secret_env.count(local::kCudaVisibleDevices) != 0;
  if (own == r.env.end() && !secret) return;
  std::string given;
  for (const auto& [node, devices] : run.gpus) {
    given += (given.empty() ? "" : ", ") + node + ": " +
             (devices.empty() ? "none" : local::device_list(devices));
  }
  const std::string line = "orchestrate: site " + options_.name +
                           " sets CUDA_VISIBLE_DEVICES to the GPUs this "
                           "attempt holds (" +
                           given + "); the job's own CUDA_VISIBLE_DEVICES" +
                           (secret ? "" : "=" + own->second) +
                           " is replaced, so that no two jobs share a GPU\n";
  const std::string output = local::run_paths(options_.root, r.token).output;
  const int fd =
      ::open(output.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;  // only a note: the launch goes on
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

std::optional<PreflightCheck> LocalSite::gpu_check() const {
  if (!assigns_gpus()) return std::nullopt;
  return local::gpu_count_check(options_.nodes, options_.gpus_per_node, options_.accelerator,
                                local::count_machine_gpus(options_.nvidia_smi, kNvidiaSmiTimeout));
}

void LocalSite::warn_about_gpus() const {
  if (!assigns_gpus()) return;
  static std::atomic<bool> said_cannot_count{false};
  const local::MachineGpus machine =
      local::count_machine_gpus(options_.nvidia_smi, kNvidiaSmiTimeout);
  if (!machine.count && said_cannot_count.exchange(true)) return;  // said once is enough
  const PreflightCheck check =
      local::gpu_count_check(options_.nodes, options_.gpus_per_node, options_.accelerator, machine);
  if (!local::is_warning(check)) return;
  std::cerr << "orchestrate: WARNING: cluster " << options_.name << ": "
            << check.why.substr(std::string("warning: ").size()) << std::endl;
}

}  // namespace orch
