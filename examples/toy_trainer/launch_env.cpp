#include "examples/toy_trainer/launch_env.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <optional>

namespace toy {
namespace {

// The first of two variables that is set and non-empty; `name` says which one it was.
std::optional<std::string> first_set(const char* a, const char* b, std::string& name) {
  for (const char* var : {a, b}) {
    if (!var) continue;
    if (const char* v = std::getenv(var); v && *v) {
      name = var;
      return std::string(v);
    }
  }
  return std::nullopt;
}

bool parse_number(const std::string& text, long min, long max, long& out) {
  errno = 0;
  char* end = nullptr;
  out = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && errno == 0 && out >= min && out <= max;
}

std::string shown(const char* a, const char* b, const char* absent) {
  std::string name;
  return first_set(a, b, name).value_or(absent);
}

bool read_rank_and_world(LaunchEnv& out, std::string& error) {
  std::string rank_var = "ORCH_TASK_RANK", world_var = "ORCH_NTASKS";
  const auto rank = first_set("ORCH_TASK_RANK", "RANK", rank_var);
  const auto world = first_set("ORCH_NTASKS", "WORLD_SIZE", world_var);
  out.from_env = rank || world;
  long n = 0;
  if (world) {
    if (!parse_number(*world, 1, INT_MAX, n)) {
      error = "$" + world_var + " must be a world size >= 1, got \"" + *world + "\"";
      return false;
    }
    out.world = static_cast<int>(n);
  }
  if (rank) {
    if (!parse_number(*rank, 0, INT_MAX, n) || n >= out.world) {
      error = "$" + rank_var + " must be a rank in [0, " + std::to_string(out.world - 1) +
              "] (world size " + std::to_string(out.world) + "), got \"" + *rank + "\"";
      return false;
    }
    out.rank = static_cast<int>(n);
  } else if (out.world > 1) {
    error = "$" + world_var + " is " + std::to_string(out.world) +
            " but neither $ORCH_TASK_RANK nor $RANK says which rank this is";
    return false;
  }
  return true;
}

bool read_master(LaunchEnv& out, std::string& error) {
  std::string addr_var, port_var = "ORCH_MASTER_PORT";
  const auto addr = first_set("ORCH_MASTER_ADDR", "MASTER_ADDR", addr_var);
  const auto port = first_set("ORCH_MASTER_PORT", "MASTER_PORT", port_var);
  if (addr) out.master_addr = *addr;
  long n = 0;
  if (port && !parse_number(*port, 1, 65535, n)) {
    error = "$" + port_var + " must be a port in [1, 65535], got \"" + *port + "\"";
    return false;
  }
  out.master_port = static_cast<int>(n);
  if (out.world > 1 && (!addr || !port)) {
    error =
        std::string("a world of ") + std::to_string(out.world) + " ranks needs " +
        (!addr ? "$ORCH_MASTER_ADDR (or $MASTER_ADDR)" : "$ORCH_MASTER_PORT (or $MASTER_PORT)") +
        ", where the ranks meet";
    return false;
  }
  return true;
}

}  // namespace

bool read_launch_env(LaunchEnv& out, std::string& error) {
  out = LaunchEnv{};
  if (!read_rank_and_world(out, error) || !read_master(out, error)) return false;
  out.node_rank = shown("ORCH_NODE_RANK", "NODE_RANK", "?");
  out.nnodes = shown("ORCH_NNODES", nullptr, "?");
  out.local_rank = shown("ORCH_LOCAL_RANK", "LOCAL_RANK", "?");
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  out.host = *host ? host : "?";
  out.node_name = shown("ORCH_NODE_NAME", nullptr, "-");
  out.report_node = shown("SLURMD_NODENAME", "ORCH_NODE_NAME", out.host.c_str());
  return true;
}

std::string describe(const LaunchEnv& env) {
  const std::string master =
      env.master_addr.empty() ? "-" : env.master_addr + ":" + std::to_string(env.master_port);
  return "rank " + std::to_string(env.rank) + "/" + std::to_string(env.world) + " node " +
         env.node_rank + "/" + env.nnodes + " local " + env.local_rank + " master " + master +
         " host " + env.host + " node_name " + env.node_name;
}

}  // namespace toy
