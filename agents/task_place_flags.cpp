// See task_place_flags.h.
#include "agents/task_place_flags.h"

#include <climits>
#include <cstdlib>
#include <utility>

#include "agents/cli_values.h"

namespace orch::agent {
namespace {

// The explicit form's flags, in the order the usage names them.
constexpr const char* kExplicitFlags[] = {"--node-rank",  "--nnodes",      "--tasks-per-node",
                                          "--local-rank", "--master-addr", "--master-port"};
// Those that only the explicit form takes (--place-from takes the rendezvous too).
constexpr const char* kRankFlags[] = {"--node-rank", "--nnodes", "--tasks-per-node",
                                      "--local-rank"};

// check_task_place names the field at fault; say which flag gave it.
std::string with_flag(const std::string& message) {
  static constexpr std::pair<const char*, const char*> kFields[] = {
      {"node_rank", "--node-rank"},           {"nnodes", "--nnodes"},
      {"tasks_per_node", "--tasks-per-node"}, {"local_rank", "--local-rank"},
      {"master_addr", "--master-addr"},       {"master_port", "--master-port"}};
  for (const auto& [field, flag] : kFields) {
    if (message.find(std::string("task place: ") + field + " ") != std::string::npos) {
      return std::string(flag) + ": " + message;
    }
  }
  return message;
}

}  // namespace

bool PlaceFlags::is_place_flag(std::string_view flag) {
  for (const char* f : kExplicitFlags) {
    if (flag == f) return true;
  }
  return flag == "--place-from";
}

bool PlaceFlags::int_flag(const std::string& flag, int* out, std::string* error) const {
  const std::string& v = given_.at(flag);
  std::int64_t n = 0;
  if (!parse_int64(v, INT_MIN, INT_MAX, &n)) {
    *error = flag + " wants a whole number, got '" + v + "'";
    return false;
  }
  *out = static_cast<int>(n);
  return true;
}

bool PlaceFlags::finish_slurm(PlaceRequest* out, std::string* error) const {
  const std::string& from = given_.at("--place-from");
  if (from != "slurm") {
    *error = "--place-from wants 'slurm', got '" + from + "'";
    return false;
  }
  for (const char* flag : kRankFlags) {
    if (given_.count(flag)) {
      *error = std::string("--place-from slurm and ") + flag +
               " do not go together: the place comes from srun or from the flags";
      return false;
    }
  }
  for (const char* flag : {"--master-addr", "--master-port"}) {
    if (!given_.count(flag)) {
      *error = std::string("--place-from slurm needs ") + flag;
      return false;
    }
  }
  TaskPlace& p = out->place;  // a gang of one, so that only the rendezvous is checked here
  p.master_addr = given_.at("--master-addr");
  if (!int_flag("--master-port", &p.master_port, error)) return false;
  if (auto ok = check_task_place(p); !ok) {
    *error = with_flag(ok.error().message);
    return false;
  }
  out->from = PlaceRequest::From::slurm;
  return true;
}

bool PlaceFlags::finish(PlaceRequest* out, std::string* error) const {
  *out = PlaceRequest{};
  if (given_.empty()) return true;
  if (given_.count("--place-from")) return finish_slurm(out, error);
  for (const char* flag : kExplicitFlags) {
    if (!given_.count(flag)) {
      *error = std::string(flag) +
               " is missing: a task's place needs --node-rank, --nnodes, --tasks-per-node, "
               "--local-rank, --master-addr and --master-port (or --place-from slurm with "
               "--master-addr and --master-port)";
      return false;
    }
  }
  TaskPlace& p = out->place;
  if (!int_flag("--node-rank", &p.node_rank, error) || !int_flag("--nnodes", &p.nnodes, error) ||
      !int_flag("--tasks-per-node", &p.tasks_per_node, error) ||
      !int_flag("--local-rank", &p.local_rank, error) ||
      !int_flag("--master-port", &p.master_port, error)) {
    return false;
  }
  p.master_addr = given_.at("--master-addr");
  if (auto ok = check_task_place(p); !ok) {
    *error = with_flag(ok.error().message);
    return false;
  }
  out->from = PlaceRequest::From::flags;
  return true;
}

std::optional<std::string> getenv_lookup(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

Result<std::optional<TaskPlace>> resolve_place(const PlaceRequest& request,
                                               const EnvLookup& lookup) {
  switch (request.from) {
    case PlaceRequest::From::none:
      return std::optional<TaskPlace>();
    case PlaceRequest::From::flags:
      return std::optional<TaskPlace>(request.place);
    case PlaceRequest::From::slurm:
      break;
  }
  auto place = task_place_from_slurm(lookup, request.place.master_addr, request.place.master_port);
  if (!place) return place.error();
  return std::optional<TaskPlace>(std::move(*place));
}

bool expand_events_path(std::string_view pattern, int task_rank, int node_rank, std::string* out,
                        std::string* error) {
  out->clear();
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out->push_back(pattern[i]);
      continue;
    }
    const char c = i + 1 < pattern.size() ? pattern[++i] : '\0';
    if (c == 't') {
      *out += std::to_string(task_rank);
    } else if (c == 'n') {
      *out += std::to_string(node_rank);
    } else if (c == '%') {
      out->push_back('%');
    } else {
      *error = "--events: '%" + std::string(c ? 1 : 0, c) +
               "' is not a pattern (%t is the task rank, %n the node rank, %% a '%')";
      return false;
    }
  }
  return true;
}

}  // namespace orch::agent
