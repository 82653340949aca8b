// The node list: `sinfo -h -N -O <fields>` with every field followed by '|'. Reason, the one
// free-text field (an admin may write anything, '|' included), comes last, so a line is the
// eight fixed fields, then the reason up to the line's final '|'. `sinfo -N` prints a node once
// per partition it is in; the rows are merged into one record per node.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/slurm/parse_util.h"
#include "adapters/slurm/slurm_parse.h"

namespace orch::slurm {
namespace {

using detail::contains;
using detail::malformed;

// name, partition, state, complete state, cpus, cpus state, memory, gres, gres used, reason
constexpr std::size_t kNodeFields = 10;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Node states Slurm prints in sinfo's StateLong (node_state_string), by whether a node in them
// can take work. The suffixes are handled separately.
constexpr std::string_view kHealthyStates[] = {
    "idle",     "allocated",     "mixed",       "completing",   "planned",
    "reserved", "blocked",       "unknown",     "power_down",   "powered_down",
    "power_up", "powering_down", "powering_up", "resume",       "cloud",
    "perfctrs", "npc",           "undrain",     "cancel_reboot"};
constexpr std::string_view kUnhealthyStates[] = {
    "down",  "drained", "draining", "drain",         "fail",   "failing", "maint",
    "inval", "future",  "error",    "reboot_issued", "reboot", "invalid"};

// Base states and flags of StateComplete (node_state_string_complete: "idle+drain+...").
constexpr std::string_view kHealthyBases[] = {"idle", "allocated", "mixed", "unknown"};
constexpr std::string_view kUnhealthyFlags[] = {"drain",          "fail",        "maintenance",
                                                "not_responding", "invalid_reg", "reboot_issued"};

bool long_state_healthy(std::string_view state) {
  // '*' not responding, '$' maintenance reservation, '^' reboot issued make a node unusable;
  // '~' '#' '!' '%' (power saving), '@' (reboot pending), '-' (planned), '+' (completing) do
  // not: Slurm powers a node up on demand and a pending reboot waits for the jobs.
  while (!state.empty() &&
         std::string_view("*~#!%$@^-+").find(state.back()) != std::string_view::npos) {
    char suffix = state.back();
    if (suffix == '*' || suffix == '$' || suffix == '^') return false;
    state.remove_suffix(1);
  }
  if (contains(kUnhealthyStates, state)) return false;
  return contains(kHealthyStates, state);  // a state this code does not know: not healthy
}

bool complete_state_healthy(std::string_view state) {
  auto parts = detail::split_all(state, '+');
  // down, error, future, or a base state this code does not know
  if (!contains(kHealthyBases, parts[0])) return false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    // Flags this code does not know (a newer Slurm) are modifiers such as "cloud": ignored.
    if (contains(kUnhealthyFlags, parts[i])) return false;
  }
  return true;
}

// One GRES entry ("gpu:h100:8(S:0-1)", "gpu:(null):5(IDX:0-4)") -> its GPU count, 0 for other
// resources. The trailing group in parentheses (sockets, indexes) is dropped; a type printed as
// "(null)" (GresUsed's untyped GPU) is no type.
std::optional<int> gpus_in_entry(std::string_view entry) {
  if (!entry.empty() && entry.back() == ')') {
    const auto open = entry.rfind('(');
    if (open != std::string_view::npos && entry.substr(open) != "(null)") {
      entry = entry.substr(0, open);
    }
  }
  auto parts = detail::split_all(entry, ':');
  if (parts.size() >= 2 && parts[1] == "(null)") parts.erase(parts.begin() + 1);
  if (parts[0] != "gpu") return 0;
  if (parts.size() == 1) return 1;  // "gpu": Slurm's count defaults to 1
  if (auto n = detail::parse_count(parts.back())) return n;
  bool typed =
      parts.size() == 2 && !parts[1].empty() &&
      ((parts[1][0] >= 'a' && parts[1][0] <= 'z') || (parts[1][0] >= 'A' && parts[1][0] <= 'Z'));
  if (typed) return 1;  // "gpu:h100": a type, Slurm's count defaults to 1
  return std::nullopt;
}

// CPUsState, "A/I/O/T" (allocated, idle, other, total) -> I.
std::optional<int> idle_cpus(std::string_view state) {
  auto parts = detail::split_all(state, '/');
  if (parts.size() != 4) return std::nullopt;
  for (std::string_view part : parts) {
    if (!detail::parse_count(part)) return std::nullopt;
  }
  return detail::parse_count(parts[1]);
}

struct NodeLine {
  NodeRecord node;
  std::string partition;
};

Result<NodeLine> parse_node_line(std::string_view line) {
  if (line.empty() || line.back() != '|') {
    return malformed("sinfo node line does not end with the field separator '|' (truncated?)",
                     line);
  }
  auto f = detail::split_first(line.substr(0, line.size() - 1), '|', kNodeFields);
  if (f.size() != kNodeFields) {
    return malformed("sinfo node line has " + std::to_string(f.size()) + " fields, expected " +
                         std::to_string(kNodeFields),
                     line);
  }
  NodeLine out;
  NodeRecord& n = out.node;
  n.name = std::string(detail::trim(f[0]));
  out.partition = std::string(detail::trim(f[1]));
  n.state = lower(detail::trim(f[2]));
  n.state_complete = lower(detail::trim(f[3]));
  auto cpus = detail::parse_count(detail::trim(f[4]));
  auto cpus_idle = idle_cpus(detail::trim(f[5]));
  auto memory = detail::parse_count(detail::trim(f[6]));  // MB (RealMemory), as sbatch --mem
  auto gpus = gpus_in_gres(detail::trim(f[7]));
  auto gpus_used = gpus_in_gres(detail::trim(f[8]));
  std::string_view reason = detail::trim(f[9]);
  if (n.name.empty() || n.name.find_first_of(" ,[]") != std::string::npos) {
    return malformed("sinfo node line has no valid node name", line);
  }
  if (n.state.empty()) return malformed("sinfo node line has no state", line);
  if (!cpus) return malformed("sinfo node line has a CPU count that is not a number", line);
  if (!cpus_idle) {
    return malformed("sinfo node line has a CPU state that is not allocated/idle/other/total",
                     line);
  }
  if (!memory) return malformed("sinfo node line has a memory size that is not a number", line);
  if (!gpus) return malformed(gpus.error().message + " in sinfo node line", line);
  if (!gpus_used) return malformed(gpus_used.error().message + " (GPUs in use)", line);
  n.cpus = *cpus;
  n.cpus_idle = *cpus_idle;
  n.memory_mb = *memory;
  n.gpus = *gpus;
  n.gpus_used = *gpus_used;
  n.gpus_busy = n.cpus > 0 && n.cpus_idle == 0 ? n.gpus : std::min(n.gpus_used, n.gpus);
  n.reason = reason == "none" || reason == "(null)" ? "" : std::string(reason);
  n.healthy = node_is_healthy(n.state, n.state_complete);
  return out;
}

}  // namespace

std::vector<std::string> node_list_argv() {
  // One -O argument: the fields in the order kNodeFields counts them, Reason last.
  const std::string fields =
      "NodeList:|,PartitionName:|,StateLong:|,StateComplete:|,CPUs:|,CPUsState:|,Memory:|,"
      "Gres:|,GresUsed:|,Reason:|";
  return {"sinfo", "-h", "-N", "-O", fields};
}

Result<std::vector<NodeRecord>> parse_node_list(std::string_view output) {
  std::vector<NodeRecord> nodes;
  std::map<std::string, std::size_t, std::less<>> index;
  for (std::string_view line : detail::non_blank_lines(output)) {
    auto parsed = parse_node_line(line);
    if (!parsed) return parsed.error();
    auto it = index.find(parsed->node.name);
    if (it == index.end()) {
      index.emplace(parsed->node.name, nodes.size());
      nodes.push_back(std::move(parsed->node));
      it = index.find(nodes.back().name);
    }
    auto& parts = nodes[it->second].partitions;
    if (!parsed->partition.empty() &&
        std::find(parts.begin(), parts.end(), parsed->partition) == parts.end()) {
      parts.push_back(parsed->partition);
    }
  }
  if (nodes.empty()) {
    return make_error(ErrorKind::invalid,
                      "sinfo listed no nodes: '" + detail::quote_line(output) + "'");
  }
  return nodes;
}

bool node_is_healthy(std::string_view state_long, std::string_view state_complete) {
  std::string s = lower(state_long);
  std::string c = lower(state_complete);
  if (s.empty() && c.empty()) return false;
  if (!s.empty() && !long_state_healthy(s)) return false;
  if (!c.empty() && !complete_state_healthy(c)) return false;
  return true;
}

Result<int> gpus_in_gres(std::string_view gres) {
  gres = detail::trim(gres);
  if (gres.empty() || gres == "(null)" || gres == "N/A") return 0;
  int total = 0;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= gres.size(); ++i) {
    char c = i < gres.size() ? gres[i] : ',';
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c != ',' || depth != 0) continue;
    std::string_view entry = gres.substr(start, i - start);
    start = i + 1;
    auto n = gpus_in_entry(entry);
    if (!n) {
      return make_error(ErrorKind::invalid,
                        "GRES entry '" + detail::quote_line(entry) + "' has no GPU count");
    }
    total += *n;
  }
  if (depth != 0) {
    return make_error(ErrorKind::invalid,
                      "GRES '" + detail::quote_line(gres) + "' has unbalanced parentheses");
  }
  return total;
}

}  // namespace orch::slurm
