// The launch contract: a task's variables, its rendezvous port, its place under srun.
#include "scheduler/model/launch_contract.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace orch {
namespace {

Error out_of_range(const std::string& field, int value, const std::string& range) {
  return make_error(ErrorKind::invalid,
                    "task place: " + field + " is " + std::to_string(value) + ", must be " + range);
}

}  // namespace

Result<void> check_task_place(const TaskPlace& p) {
  if (p.nnodes < 1) return out_of_range("nnodes", p.nnodes, "at least 1");
  if (p.tasks_per_node < 1) return out_of_range("tasks_per_node", p.tasks_per_node, "at least 1");
  if (p.node_rank < 0 || p.node_rank >= p.nnodes) {
    return out_of_range("node_rank", p.node_rank, "0 to " + std::to_string(p.nnodes - 1));
  }
  if (p.local_rank < 0 || p.local_rank >= p.tasks_per_node) {
    return out_of_range("local_rank", p.local_rank, "0 to " + std::to_string(p.tasks_per_node - 1));
  }
  if (p.master_port < 1 || p.master_port > 65535) {
    return out_of_range("master_port", p.master_port, "1 to 65535");
  }
  if (p.master_addr.empty()) {
    return make_error(ErrorKind::invalid, "task place: master_addr is empty");
  }
  return Ok{};
}

int task_rank(const TaskPlace& p) {
  return p.node_rank * p.tasks_per_node + p.local_rank;
}

int task_count(const TaskPlace& p) {
  return p.nnodes * p.tasks_per_node;
}

std::vector<std::pair<std::string, std::string>> task_env(const TaskPlace& p) {
  const std::string port = std::to_string(p.master_port);
  const std::string rank = std::to_string(task_rank(p));
  const std::string ntasks = std::to_string(task_count(p));
  return {
      {"ORCH_NODE_RANK", std::to_string(p.node_rank)},
      {"ORCH_NNODES", std::to_string(p.nnodes)},
      {"ORCH_TASK_RANK", rank},
      {"ORCH_NTASKS", ntasks},
      {"ORCH_LOCAL_RANK", std::to_string(p.local_rank)},
      {"ORCH_MASTER_ADDR", p.master_addr},
      {"ORCH_MASTER_PORT", port},
      {"NODE_RANK", std::to_string(p.node_rank)},
      {"WORLD_SIZE", ntasks},
      {"RANK", rank},
      {"LOCAL_RANK", std::to_string(p.local_rank)},
      {"MASTER_ADDR", p.master_addr},
      {"MASTER_PORT", port},
  };
}

int master_port_for(std::string_view token) {
  // FNV-1a: stable across builds and machines (std::hash is neither promised).
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : token) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return 20000 + static_cast<int>(h % 10000);
}

Result<TaskPlace> task_place_from_slurm(
    const std::function<std::optional<std::string>(std::string_view)>& lookup,
    const std::string& master_addr, int master_port) {
  auto number = [&](std::string_view name) -> Result<int> {
    auto text = lookup(name);
    if (!text || text->empty()) {
      return make_error(ErrorKind::invalid,
                        std::string(name) + " is not set: is this task started by srun?");
    }
    int value = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size()) {
      return make_error(ErrorKind::invalid,
                        std::string(name) + " is \"" + *text + "\", not a whole number");
    }
    return value;
  };
  TaskPlace p;
  p.master_addr = master_addr;
  p.master_port = master_port;
  auto node = number("SLURM_NODEID");
  if (!node) return node.error();
  auto nnodes = number("SLURM_NNODES");
  if (!nnodes) return nnodes.error();
  auto local = number("SLURM_LOCALID");
  if (!local) return local.error();
  auto ntasks = number("SLURM_NTASKS");
  if (!ntasks) return ntasks.error();
  auto procid = number("SLURM_PROCID");
  if (!procid) return procid.error();
  if (*nnodes < 1 || *ntasks % *nnodes != 0) {
    return make_error(ErrorKind::invalid, "SLURM_NTASKS " + std::to_string(*ntasks) +
                                              " is not a multiple of SLURM_NNODES " +
                                              std::to_string(*nnodes) +
                                              ": the gang needs the same tasks on every node");
  }
  p.node_rank = *node;
  p.nnodes = *nnodes;
  p.local_rank = *local;
  p.tasks_per_node = *ntasks / *nnodes;
  if (auto ok = check_task_place(p); !ok) return ok.error();
  if (task_rank(p) != *procid) {
    return make_error(ErrorKind::invalid,
                      "SLURM_PROCID " + std::to_string(*procid) + " is not node " +
                          std::to_string(p.node_rank) + " x " + std::to_string(p.tasks_per_node) +
                          " + local " + std::to_string(p.local_rank) +
                          ": srun must place tasks in blocks (--distribution=block)");
  }
  return p;
}

double heartbeat_interval_s(double timeout_s) {
  if (!(timeout_s > 0)) return 30.0;
  return std::min(5.0, timeout_s / 3.0);
}

}  // namespace orch
