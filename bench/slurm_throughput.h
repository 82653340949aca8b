#pragma once
// bench_slurm's measurements 2 and 3, on one lab of one cluster (alpha):
//   2. launches/s: SlurmSite::launch over one SSH connection, against the naive way, one new
//      OpenSSH `ssh` process per launch doing the same mkdir, script upload and sbatch.
//   3. polls/s: SlurmSite::observe and a raw SshSession::exec("squeue ...") over one
//      connection, against one new `ssh ... squeue` process per poll.

namespace orch::bench {

// `launches` launches and `polls` polls of each kind, interleaved; 0 skips that measurement.
// Prints a table per measurement (stdout); throws when the lab or its job does not come up.
void bench_throughput(int launches, int polls);

}  // namespace orch::bench
