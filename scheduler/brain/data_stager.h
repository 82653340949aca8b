#pragma once
// The brain's staging part (issue 5, docs/data.md): which checkpoints a launch may resume from
// at a site, what a job still needs copied there before it starts (its datasets, a newer
// checkpoint held at another site), and the staging-time terms placement weighs. It writes no
// copy row of its own: where copies lie is the registry's (DataRegistry), the copies it starts
// and the bandwidth between sites the transfers' (DataTransfers). Placing asks it what a launch
// needs; nothing else does.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/data_registry.h"
#include "scheduler/brain/data_transfers.h"

namespace orch {

class DataStager : BrainPart {
 public:
  DataStager(BrainCore& core, DataRegistry& registry, DataTransfers& transfers)
      : BrainPart(core), registry_(registry), transfers_(transfers) {}

  // Candidates to resume from at `cluster`, newest first (verified or not yet listed copies).
  Result<std::vector<ResumeCandidate>> resume_candidates_at(JobId job, const std::string& cluster);
  // What the job still needs at `cluster` before it can launch there (datasets, its code, the
  // newest checkpoint); starts the copies. Empty: ready. Fills the dataset variables into env.
  Result<std::vector<std::string>> stage_for(const JobRow& job, const std::string& cluster,
                                             std::map<std::string, std::string>& env);
  // When a newer verified checkpoint than the best candidate at `cluster` is held at another
  // usable site, weighs redoing the steps between them against copying it (weigh_resume,
  // scheduler/data/staging.h) and, when the copy loses less, starts (or waits for) it; the
  // decision and both estimates are a "resume-weighed" event. Also the floor below which the
  // launch's check must not resume (a candidate here may turn out missing).
  struct CheckpointStaging {
    std::optional<std::string> wait;  // why the job waits, when it does
    std::optional<std::int64_t> floor_step;
    std::string floor_reason;
    bool saved_before = false;  // the job has saved a checkpoint (anywhere)
  };
  // `attempts`: the job's attempts, as the placer read them (each holds its node list: a gang
  // of thousands is not read twice per try).
  Result<CheckpointStaging> stage_checkpoint(const JobRow& job, const std::string& cluster,
                                             const std::vector<ResumeCandidate>& here,
                                             const std::vector<AttemptRow>& attempts);
  // Seconds to stage the job's datasets at each configured cluster (placement's term).
  Result<std::map<std::string, double>> staging_estimates(const JobSpec& spec);
  // Seconds to copy the job's newest checkpoint to each configured cluster (placement's price of
  // a move, move_worth.h): 0 where a copy of it is registered, verified or under way; its bytes
  // over the best measured bandwidth from a kept copy elsewhere (none left: infinite). Empty
  // when it has no checkpoint or its size is not known yet (the move is then priced by its data
  // alone).
  Result<std::map<std::string, double>> checkpoint_copy_estimates(JobId job);

 private:
  // stage_for's code part (code_stager.cpp): the job's workdir archive at `cluster`, sent once
  // per hash from the server's code store; why it waits, when it does.
  Result<void> stage_code(const JobRow& job, const std::string& cluster,
                          std::vector<std::string>& waits);
  static bool lists_storage_at(const ClusterSpec* spec) {
    return spec != nullptr && spec->lists_storage();
  }
  // stage_checkpoint's steps. The copy to `at_dst` under way from a usable site, if any (the
  // active transfers are read into `active` once, when first needed).
  Result<const TransferRow*> copy_in_flight(const ReplicaRow* at_dst,
                                            const std::set<std::string>& usable,
                                            std::optional<std::vector<TransferRow>>& active);
  // Starts the copy of `ckpt` from `source` to `cluster` unless `in_flight` already copies it,
  // says so in a "resume-weighed" event once per copy, and returns why the job waits.
  Result<std::string> wait_for_checkpoint_copy(const JobRow& job, const std::string& cluster,
                                               const CheckpointRow& ckpt, const ReplicaRow* source,
                                               const TransferRow* in_flight,
                                               const std::string& from,
                                               const std::string& estimates);

  DataRegistry& registry_;
  DataTransfers& transfers_;
};

}  // namespace orch
