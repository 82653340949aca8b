#pragma once
// The preflight of a site (`orchestrate cluster check NAME`, docs/health.md): what a provider
// found when it tried, one by one, everything a launch will need (the login node's port, the
// key file, sinfo, the partition, the storage root, the agent...), as plain values, and the
// pure rules that judge what it saw. Providers gather the facts (adapters/*/..._preflight.cpp);
// the judges here turn them into checks; the brain keeps a cluster that fails one out of
// placement until a later preflight passes.

#include <optional>
#include <string>
#include <vector>

namespace orch {

// One line of the preflight: its name ("key-file", "partition"), whether it passed, and why in
// a person's words (what was found, and what to do about it when it failed).
struct PreflightCheck {
  std::string name;
  bool ok = true;
  std::string why;
  // Not tried: a check it depends on failed first (why names that check). Neither passes nor
  // fails on its own.
  bool skipped = false;
};

inline PreflightCheck check_passed(std::string name, std::string why) {
  return PreflightCheck{std::move(name), true, std::move(why), false};
}
inline PreflightCheck check_failed(std::string name, std::string why) {
  return PreflightCheck{std::move(name), false, std::move(why), false};
}
inline PreflightCheck check_skipped(std::string name, const std::string& after) {
  return PreflightCheck{std::move(name), true, "not tried: " + after + " failed first", true};
}

// The first failed check, if any.
const PreflightCheck* first_failure(const std::vector<PreflightCheck>& checks);
// "cluster NAME misconfigured: <check>: <why>[ (and N more)]": the reason a job waits and the
// cluster's message; empty when every check passed.
std::string misconfigured_reason(const std::string& cluster,
                                 const std::vector<PreflightCheck>& checks);
// One line per check, as `orchestrate cluster check` prints them: "<name>  ok|FAILED|skipped
// <why>".
std::string preflight_line(const PreflightCheck& check);

// ---- the judges (pure: what a provider saw in, a check out) --------------------------------

// What a remote command answered: its exit status (nullopt: it did not run at all) and output.
struct CommandAnswer {
  std::optional<int> exit_status;
  std::string out;
  std::string err;
};

// `wanted` (the configured partition; empty: the cluster's default) among the partitions
// `sinfo -h -o %R` listed, one a line.
PreflightCheck judge_partition(const std::string& wanted, const CommandAnswer& sinfo);
// The configured account or QoS (`what`: "account" or "qos"; key: the clusters file key that
// sets it) among the names `sacctmgr -nP show assoc format=account` or `show qos format=name`
// listed. A cluster without accounting (sacctmgr missing or refusing: Slurm then enforces
// neither) passes, saying so; an empty `wanted` passes.
PreflightCheck judge_association(const std::string& what, const std::string& key,
                                 const std::string& wanted, const CommandAnswer& sacctmgr);
// `command -v rsync` on the login node: data moves with it (docs/data.md).
PreflightCheck judge_rsync(const CommandAnswer& which);
// The container runtime the cluster declares (`runtime`: "pyxis" or "apptainer"; issue 40)
// answering on the login node: for pyxis, srun's help lists --container-image (the SPANK plugin
// is loaded); for apptainer, `apptainer --version` answers.
PreflightCheck judge_container_runtime(const std::string& runtime, const CommandAnswer& answer);
// The storage-root write test (a file written, read back and removed under `root`), `where`
// it ran ("from a compute node" or "from the login node").
PreflightCheck judge_storage(const std::string& root, const std::string& where,
                             const CommandAnswer& answer);

}  // namespace orch
