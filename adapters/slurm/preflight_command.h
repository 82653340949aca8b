#pragma once
// The commands of a Slurm site's preflight (slurm_site_preflight.cpp), as shell lines for the
// login node, every value quoted, and the reading of the storage test's answer. The verdicts
// are scheduler/model/preflight.h's.

#include <string>

#include "scheduler/common/result.h"
#include "scheduler/model/preflight.h"
#include "scheduler/spec/cluster_spec.h"

namespace orch::slurm {

// The partitions, one a line: `sinfo -h -o %R`.
inline constexpr const char* kPreflightPartitions = "sinfo -h -o %R";
// The associations of `account`, and the QoS named `qos`, as sacctmgr lists them (one name a
// line; none when unknown; sacctmgr fails where the cluster keeps no accounting).
Result<std::string> accounts_command(const std::string& account);
Result<std::string> qos_command(const std::string& qos);
inline constexpr const char* kPreflightRsync = "command -v rsync";
// What judge_container_runtime reads: srun's help (pyxis adds its options there) or
// apptainer's version.
inline constexpr const char* kPreflightPyxis = "srun --help 2>&1";
inline constexpr const char* kPreflightApptainer = "apptainer --version";

// Writes, reads back and removes a file in `root` from one compute node (a one-task srun that
// may wait `wait_s` for a node, with the cluster's partition, account and QoS); where srun
// cannot run, the same test from the login node. It prints kWritableMark or kNotWritableMark,
// and kLoginNodeMark when the test ran on the login node.
Result<std::string> storage_test_command(const std::string& root, const SlurmSpec& slurm,
                                         int wait_s);
inline constexpr const char* kWritableMark = "ORCH-PREFLIGHT-WRITABLE";
inline constexpr const char* kNotWritableMark = "ORCH-PREFLIGHT-NOT-WRITABLE";
inline constexpr const char* kLoginNodeMark = "ORCH-PREFLIGHT-ON-LOGIN-NODE";

// The check of storage_test_command's answer: where it ran and whether it could write.
PreflightCheck storage_verdict(const std::string& root, const CommandAnswer& answer);

}  // namespace orch::slurm
