#pragma once
// A job file's `shell:`, resources.cpus_per_task, resources.memory and `slurm:` (issue 40,
// items 3 and 5; docs/config.md "shell" and "The Slurm job shape"):
//
//   shell: bash                        # bash | sh | bash-login; unset: bash where the node
//                                      # has it, else sh
//   resources: {cpus_per_task: 8, memory: 64G}
//   slurm: {partition: gpu, account: proj, qos: high, reservation: maint,
//           constraint: "a100&ib", exclusive: true}
//
// Every slurm value is checked byte by byte where it is written (slurm_option_problem): no
// value can add an sbatch option or split the batch script's lines.

#include "scheduler/spec/job_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// The keys of `slurm:` (a job's and a cluster's).
std::vector<std::string_view> slurm_job_option_keys();

// resources.cpus_per_task and resources.memory, from the job's `resources:` view (the parser
// lists both among the section's keys).
void read_resource_shape(yaml::MapView& resources, JobSpec& spec);
// `shell:` and `slurm:` from the job map.
void read_shell_and_slurm(yaml::MapView& job, JobSpec& spec);
// The option keys of a `slurm:` map (a job's, or a cluster's for its defaults), each checked.
void read_slurm_job_options(yaml::MapView& slurm, SlurmJobOptions& out);

}  // namespace orch
