#pragma once
// The flags of `orchestrate-agent run` that place its task in a gang (issue 14,
// docs/launch-contract.md), and what the place fills in: the events file name's %t and %n.
//
//   --node-rank R --nnodes N --tasks-per-node K --local-rank L --master-addr HOST --master-port P
//   --place-from slurm --master-addr HOST --master-port P
//
// The first form gives the place outright (all six flags together); the second reads it from
// srun's per-task variables when the agent runs. Without either, the task is alone (no place).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/common/result.h"
#include "scheduler/model/launch_contract.h"

namespace orch::agent {

struct PlaceRequest {
  enum class From { none, flags, slurm };
  From from = From::none;
  // flags: the whole place, checked. slurm: master_addr and master_port only (checked); the
  // rest comes from the environment at run time.
  TaskPlace place;
};

// Collects the place flags among `run`'s words (the last of a repeated flag wins), then checks
// that they belong together.
class PlaceFlags {
 public:
  // Whether flag is one of the place flags (each takes a value).
  static bool is_place_flag(std::string_view flag);
  void set(const std::string& flag, const std::string& value) { given_[flag] = value; }
  // The request the flags make; false with *error (naming the flag at fault) when a value is
  // not a number, a flag is missing, the forms are mixed, or the place is not one a gang has.
  bool finish(PlaceRequest* out, std::string* error) const;

 private:
  bool int_flag(const std::string& flag, int* out, std::string* error) const;
  bool finish_slurm(PlaceRequest* out, std::string* error) const;
  std::map<std::string, std::string, std::less<>> given_;
};

// Reads one environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;
std::optional<std::string> getenv_lookup(std::string_view name);

// The task's place: none, the one the flags gave, or the one srun's variables give (read with
// lookup; invalid naming the variable when they are missing or disagree).
Result<std::optional<TaskPlace>> resolve_place(const PlaceRequest& request,
                                               const EnvLookup& lookup);

// The events file name with %t (the task rank), %n (the node rank) and %% (a '%') replaced, as
// srun does with its file name patterns. false with *error for any other '%' sequence.
bool expand_events_path(std::string_view pattern, int task_rank, int node_rank, std::string* out,
                        std::string* error);

}  // namespace orch::agent
