#pragma once
// The user local sites run the tests' jobs as. A root server refuses a local site without
// `local.run_as` (docs/security.md, "The host"), and the tests run as root in CI and in the lab:
// there, every clusters file with a local site names a job user, every program a job runs must
// be one that user can run, and every directory a job must reach one it can search. Not root,
// the jobs run as the test's own user, as before, and these change nothing.

#include <string>

namespace orch::testkit {

// "orchestrate-job" when this machine has it (`make deps` makes it), else "nobody"; "" when the
// tests do not run as root.
std::string job_user();

// What to add inside a local cluster's flow map of a clusters file ("{name: a, provider: local"
// + local_run_as_yaml() + "}"): ", local: {run_as: USER}" as root, else "".
std::string local_run_as_yaml();

// The directory of the test programs jobs run (toy_trainer, the orchestrate CLI) as job_user() can
// run them: the build's bin directory when that user can search every directory down to it, else a
// copy made once per process under /tmp (0755), removed at exit.
std::string job_bin_dir();

// Lets job_user() search `dir` (o+x: no listing), for a directory a test made with mkdtemp
// (0700) that jobs must reach through. Nothing when not root.
void open_to_jobs(const std::string& dir);

}  // namespace orch::testkit
