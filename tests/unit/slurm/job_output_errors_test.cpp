// sbatch's answer, and every parser against malformed or truncated output: an error that
// quotes what it got, never a crash or a made-up job.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "adapters/slurm/slurm_parse.h"
#include "tests/unit/slurm/fixture.h"

namespace orch::slurm {
namespace {

using testing::fixture;
using ::testing::HasSubstr;

// ---- sbatch -------------------------------------------------------------------------------

TEST(slurm_parse_sbatch, ParsableJobId) {
  auto id = parse_sbatch_job_id(fixture("lab-22.05/sbatch-parsable.txt"));
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(*id, "12");
  id = parse_sbatch_job_id(fixture("lab-22.05/sbatch-parsable-cluster.txt"));
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(*id, "15");
  id = parse_sbatch_job_id("  \n4242\r\n\n");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "4242");
}

TEST(slurm_parse_sbatch, AnythingElseIsInvalid) {
  for (const std::string& bad :
       {std::string(""), fixture("lab-22.05/sbatch-refused.txt"),
        fixture("lab-22.05/sbatch-refused.stderr.txt"), std::string("Submitted batch job 12\n"),
        std::string("12\n13\n"), std::string(";alpha\n"), std::string("12a\n"),
        std::string("-1\n")}) {
    auto id = parse_sbatch_job_id(bad);
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_EQ(id.error().kind, ErrorKind::invalid);
  }
  auto id = parse_sbatch_job_id("sbatch: error: Batch job submission failed\n");
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(id.error().message, HasSubstr("'sbatch: error: Batch job submission failed'"));
}

// ---- malformed output ---------------------------------------------------------------------

TEST(slurm_parse_malformed, MalformedLinesAreInvalidAndQuoted) {
  struct Case {
    Result<std::vector<JobRecord>> (*parse)(std::string_view);
    std::string output;
    std::string message;
  };
  const std::vector<Case> cases = {
      {parse_squeue, "9|orch-1|RUNNING|None", "squeue line has 4 fields"},
      {parse_squeue, "garbage", "'garbage'"},
      {parse_squeue, "squeue: error: Invalid user: x", "'squeue: error: Invalid user: x'"},
      {parse_squeue, "x9|orch-1|RUNNING|None||c", "does not start with a job id"},
      {parse_squeue, "9|orch-1|running|None||c", "no job state"},
      {parse_squeue, "9|orch-1|RUNNING|None|n[1-|c", "host list"},
      {parse_scontrol_jobs, "JobName=x JobState=RUNNING", "does not start with JobId="},
      {parse_scontrol_jobs, "JobId=9 JobName=orch-1 UserId=root(0)", "no JobState="},
      {parse_scontrol_jobs, "JobId=9 JobName=x JobState=RUNNING Reason=None ExitCode=0",
       "ExitCode that is not N:S"},
      {parse_scontrol_jobs, "JobId=9 JobName=x JobState= ExitCode=0:0", "no job state"},
      {parse_scontrol_jobs, "JobId= JobName=x JobState=RUNNING ExitCode=0:0",
       "does not start with a job id"},
      {parse_scontrol_jobs, "JobId=9 JobName=x JobState=RUNNING ExitCode=0:0 NodeList=a[",
       "host list"},
      {parse_sacct, "9|orch-1|RUNNING", "sacct line has 3 fields"},
      {parse_sacct, "9|orch-1|RUNNING|zero|n1|None|", "ExitCode that is not N:S"},
      {parse_sacct, "JobID|JobName|State|ExitCode|NodeList|Reason|Comment",
       "does not start with a job id"},
      {parse_sacct, "\x1b[31m9|x|RUNNING|0:0|n1|None|", "\\x1b[31m9"},
  };
  for (const Case& c : cases) {
    auto r = c.parse(c.output);
    ASSERT_FALSE(r.ok()) << c.output;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid);
    EXPECT_THAT(r.error().message, HasSubstr(c.message)) << c.output;
  }
}

TEST(slurm_parse_malformed, EveryTruncationOfEveryCapturedOutputParsesOrIsInvalid) {
  const char* files[] = {
      "lab-22.05/squeue-running-2-nodes.txt", "lab-22.05/scontrol-running-2-nodes.txt",
      "lab-22.05/scontrol-hostile-name.txt",  "lab-22.05/sacct-cancelled.txt",
      "docs-24.x/sacct-states-24.11.txt",     "docs-24.x/scontrol-preempted-25.11.txt"};
  for (const char* f : files) {
    const std::string out = fixture(f);
    for (std::size_t n = 0; n <= out.size(); ++n) {
      std::string_view cut(out.data(), n);
      for (auto parse : {parse_squeue, parse_scontrol_jobs, parse_sacct}) {
        auto r = parse(cut);
        if (!r.ok()) {
          EXPECT_EQ(r.error().kind, ErrorKind::invalid) << f << " cut at " << n;
        }
      }
    }
  }
}

TEST(slurm_parse_malformed, LongLinesAreQuotedShort) {
  std::string line(5000, 'x');
  auto r = parse_squeue(line);
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.error().message.size(), 400u);
  EXPECT_THAT(r.error().message, HasSubstr("..."));
}

}  // namespace
}  // namespace orch::slurm
