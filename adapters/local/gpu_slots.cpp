#include "adapters/local/gpu_slots.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "adapters/process/run_captured.h"

namespace orch::local {
namespace {

constexpr const char* kWarning = "warning: ";

// The first non-blank line of a program's words, for a message.
std::string first_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      if (line.size() > 200) line = line.substr(0, 200) + "...";
      return line;
    }
  }
  return "no output";
}

bool is_index(std::string line) {
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  const auto start = line.find_first_not_of(' ');
  if (start == std::string::npos) return false;
  for (std::size_t i = start; i < line.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(line[i]))) return false;
  }
  return true;
}

std::string range(int first, int count) {
  if (count <= 0) return "none";
  if (count == 1) return std::to_string(first);
  return std::to_string(first) + ".." + std::to_string(first + count - 1);
}

}  // namespace

std::optional<std::vector<int>> take_devices(int node_index, int gpus_per_node, int total, int want,
                                             const std::string& token, HeldGpus& held) {
  std::vector<int> order;
  const int own = node_index * gpus_per_node;
  for (int d = own; d < own + gpus_per_node && d < total; ++d) order.push_back(d);
  for (int d = 0; d < total; ++d) {
    if (d < own || d >= own + gpus_per_node) order.push_back(d);
  }
  std::vector<int> out;
  for (int d : order) {
    if (static_cast<int>(out.size()) >= want) break;
    if (held.count(d) == 0) out.push_back(d);
  }
  if (static_cast<int>(out.size()) < want) return std::nullopt;
  for (int d : out) held.emplace(d, token);
  std::sort(out.begin(), out.end());
  return out;
}

std::string device_list(const std::vector<int>& indexes) {
  std::string out;
  for (int i : indexes) out += (out.empty() ? "" : ",") + std::to_string(i);
  return out;
}

MachineGpus count_machine_gpus(const std::string& program, std::chrono::milliseconds timeout) {
  process::RunOptions options;
  options.timeout = timeout;
  options.max_out = 64 << 10;
  auto run =
      process::run_captured({program, "--query-gpu=index", "--format=csv,noheader"}, options);
  MachineGpus m;
  if (!run) {
    m.problem = "cannot run " + program + " (" + run.error().message + ")";
    return m;
  }
  if (run->timed_out) {
    m.problem = program + " did not answer within " + std::to_string(timeout.count() / 1000) + " s";
    return m;
  }
  if (run->exit.exit_code != 0) {
    const std::string why = first_line(run->err.empty() ? run->out : run->err);
    m.problem = program + " failed (" +
                (run->exit.exit_code >= 0 ? "exit " + std::to_string(run->exit.exit_code)
                                          : "signal " + std::to_string(run->exit.signal)) +
                "): " + why;
    return m;
  }
  int count = 0;
  std::istringstream in(run->out);
  std::string line;
  while (std::getline(in, line)) count += is_index(line) ? 1 : 0;
  m.count = count;
  return m;
}

PreflightCheck gpu_count_check(int nodes, int gpus_per_node, const std::string& accelerator,
                               const MachineGpus& machine) {
  const int declared = nodes * gpus_per_node;
  const std::string site = "the site declares " + std::to_string(declared) + " " + accelerator +
                           " GPU(s) (" + std::to_string(nodes) + " node(s) x " +
                           std::to_string(gpus_per_node) + ")";
  if (!machine.count) {
    return check_passed("gpus", kWarning + std::string("cannot count this machine's GPUs: ") +
                                    machine.problem + "; " + site +
                                    " and gives tasks device indexes " + range(0, declared) +
                                    " in CUDA_VISIBLE_DEVICES without checking them");
  }
  const int found = *machine.count;
  if (found == declared) {
    return check_passed("gpus", site + " and nvidia-smi lists " + std::to_string(found) +
                                    " on this machine; each task gets its attempt's devices "
                                    "in CUDA_VISIBLE_DEVICES");
  }
  std::string effect =
      found < declared
          ? "tasks given device indexes " + range(found, declared - found) + " will not find them"
          : "devices " + range(declared, found - declared) +
                " are never given to a job, and anything else on this machine may use them";
  return check_passed("gpus", kWarning + site + " but nvidia-smi lists " + std::to_string(found) +
                                  " on this machine: " + effect +
                                  "; make nodes x gpus_per_node match the machine");
}

bool is_warning(const PreflightCheck& check) {
  return check.why.rfind(kWarning, 0) == 0;
}

}  // namespace orch::local
