#include "adapters/slurm/preflight_command.h"

#include <vector>

#include "adapters/ssh/shell_quote.h"

namespace orch::slurm {
namespace {

// The test itself, as `sh -c` runs it with the root as $1: a file made, read back, removed.
constexpr const char* kWriteTest =
    "f=\"$1/.orch-preflight-$(hostname)-$$\"; mkdir -p \"$1\" && echo ok > \"$f\" && "
    "test \"$(cat \"$f\")\" = ok && rm -f \"$f\" && echo ";

}  // namespace

Result<std::string> accounts_command(const std::string& account) {
  return shell_command(
      {"sacctmgr", "-nP", "show", "assoc", "where", "account=" + account, "format=account"});
}

Result<std::string> qos_command(const std::string& qos) {
  return shell_command({"sacctmgr", "-nP", "show", "qos", "where", "name=" + qos, "format=name"});
}

Result<std::string> storage_test_command(const std::string& root, const SlurmSpec& slurm,
                                         int wait_s) {
  const std::string test = std::string(kWriteTest) + kWritableMark + " || echo " + kNotWritableMark;
  std::vector<std::string> srun = {"srun",      "--job-name=orch-preflight",
                                   "--nodes=1", "--ntasks=1",
                                   "--time=1",  "--immediate=" + std::to_string(wait_s)};
  if (!slurm.partition.empty()) srun.push_back("--partition=" + slurm.partition);
  if (!slurm.account.empty()) srun.push_back("--account=" + slurm.account);
  if (!slurm.qos.empty()) srun.push_back("--qos=" + slurm.qos);
  for (const std::string& word :
       {std::string("/bin/sh"), std::string("-c"), test, std::string("sh"), root}) {
    srun.push_back(word);
  }
  auto on_node = shell_command(srun);
  if (!on_node) return on_node.error();
  auto on_login = shell_command({"/bin/sh", "-c", test, "sh", root});
  if (!on_login) return on_login.error();
  // srun's own output is kept; when it printed neither mark it could not run the test.
  return "out=$(" + *on_node + " 2>&1); case \"$out\" in *" + kWritableMark + "*|*" +
         kNotWritableMark + "*) printf '%s\\n' \"$out\";; *) printf '%s\\n' \"$out\" >&2; echo " +
         kLoginNodeMark + "; " + *on_login + " 2>&1;; esac";
}

PreflightCheck storage_verdict(const std::string& root, const CommandAnswer& answer) {
  const bool login = answer.out.find(kLoginNodeMark) != std::string::npos;
  std::string where =
      login ? "from the login node (srun could not run a test step" : "from a compute node";
  if (login) {
    std::string why = answer.err.substr(0, answer.err.find('\n'));
    where += why.empty() ? ")" : ": " + why.substr(0, 160) + ")";
  }
  CommandAnswer verdict = answer;
  const bool writable = answer.out.find(kWritableMark) != std::string::npos &&
                        answer.out.find(kNotWritableMark) == std::string::npos;
  verdict.exit_status = writable ? 0 : 1;
  if (!writable) {
    // What the test said, without the marks.
    std::string said;
    std::size_t at = 0;
    while (at < answer.out.size()) {
      std::size_t nl = answer.out.find('\n', at);
      std::string line = answer.out.substr(at, nl == std::string::npos ? nl : nl - at);
      at = nl == std::string::npos ? answer.out.size() : nl + 1;
      if (line.find("ORCH-PREFLIGHT") == std::string::npos && !line.empty() && said.empty()) {
        said = line;
      }
    }
    verdict.err = said.empty() ? "it could not write there" : said;
  }
  return judge_storage(root, where, verdict);
}

}  // namespace orch::slurm
