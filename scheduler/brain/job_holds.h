#pragma once
// Why a waiting job may not be placed now, whatever the clusters hold (issue 45): the placer
// asks before it tries a job (Placer::try_place). Each rule gives a job row and the time a
// Hold or nothing; a hold that can never be released (a job it waits for failed) cancels the
// job with its reason. Rules, in order: dependencies (`after:`, spec/after_section.h), then team
// budgets (budget_keeper.h: a team past its budget; every held job is woken at the next month's
// start).
//
// Held jobs leave the placement round (WaitingQueue::hold) until something wakes them, so a
// long queue of held jobs costs nothing per event: a job they wait for changing state
// (note_changes, from the rows each transaction wrote), a timer (wake_at), or a change every
// held job must see (wake_all, e.g. a budget raised or a new month). A woken job is tried once
// more and held again if a rule still says so.
//
// Also the dependency's other half: where a dependent may run and the variables that give it
// the newest verified checkpoint of each job it waited for (ORCH_AFTER_<NAME>_CHECKPOINT).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "scheduler/brain/brain_core.h"
#include "scheduler/brain/budget_keeper.h"

namespace orch {

struct Hold {
  std::string reason;  // why it waits, for people: "waiting for job 12 (train) to succeed"
  bool final = false;  // it can never be released: the job is cancelled with the reason
};

class JobHolds : BrainPart {
 public:
  explicit JobHolds(BrainCore& core) : BrainPart(core) {}

  // The first rule that holds the job, or nullopt when none does.
  Result<std::optional<Hold>> hold_of(const JobRow& job, Millis now);
  // Asks hold_of and acts on it: a held job gets the hold's reason (an event when it changed),
  // a job that can never be released is cancelled with it. True: not to be placed now.
  Result<bool> keep_waiting(JobRow& job, Millis now);

  // Wakes the jobs held on any of these jobs when it changed state (the rows a transaction wrote,
  // Store::job_changes).
  void note_changes(const std::vector<JobChange>& changes);
  // Wakes one held job now, or at a time; or every held job (now, or at a time).
  void wake(JobId job) { woken_.push_back(job); }
  void wake_at(JobId job, Millis at);
  void wake_all() { wake_all_at(0); }
  void wake_all_at(Millis at);
  // The held jobs to try again at `now` (each once), and the earliest timer still ahead.
  std::vector<JobId> take_woken(Millis now);
  std::optional<Millis> next_wake() const;
  // A transaction rolled back: what it taught is forgotten (the queue is read again, and every
  // job is asked again).
  void forget();

  // Team budgets (budget_keeper.h): the rule after dependencies, and the tick's sweep.
  BudgetKeeper& budgets() { return budgets_; }

  // Dependencies. At submit: each `after:` entry's job resolved (an id, or the newest job of
  // that name) into AfterSpec::id; refused, naming the entry, when it names no job, the job
  // itself (a cycle), a job that can no longer succeed, or two jobs whose variables would clash.
  Result<void> resolve_after(JobSpec& spec);
  // The clusters holding a verified copy (on shared storage) of the newest verified
  // checkpoint of every job it waited for that saved one: a dependent runs where they are. Empty:
  // no such checkpoint, or none where all are (any cluster then).
  Result<std::vector<std::string>> checkpoint_sites(const JobRow& job);
  // The job's spec with placement.allowed narrowed to checkpoint_sites (within what it allowed),
  // into `out`; false when nothing narrows it.
  Result<bool> narrow_to_checkpoints(const JobRow& job, JobSpec& out);
  // ORCH_AFTER_<NAME>_CHECKPOINT for each job it waited for with a verified copy at `cluster`.
  Result<void> fill_after_env(const JobRow& job, const std::string& cluster,
                              std::map<std::string, std::string>& env);

 private:
  Result<std::optional<Hold>> dependency_hold(const JobRow& job, Millis now);
  // For a job that succeeded: whether its newest checkpoint still waits to be verified (the
  // dependent then waits a little for it, at most kVerifyWaitMs after the job ended).
  Result<std::optional<std::string>> checkpoint_unverified(const JobRow& upstream, Millis now);
  // The newest verified checkpoint's copies on shared storage: cluster -> path.
  Result<std::map<std::string, std::string>> newest_verified(JobId job);

  std::unordered_map<JobId, std::set<JobId>> dependents_;  // a job -> the jobs held on it
  std::set<JobId> held_;                                   // jobs a rule holds
  std::set<JobId> satisfied_;  // jobs whose dependencies all hold (they stay so: ended jobs)
  std::vector<JobId> woken_;
  std::multimap<Millis, JobId> timers_;
  std::optional<Millis> wake_all_at_;
  BudgetKeeper budgets_{core_};
};

}  // namespace orch
