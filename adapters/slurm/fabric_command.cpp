// The fabric round's command and its reading (fabric_command.h).
#include "adapters/slurm/fabric_command.h"

#include <map>

#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/parse_util.h"
#include "adapters/slurm/probe_command.h"
#include "adapters/ssh/shell_quote.h"
#include "scheduler/common/text.h"
#include "scheduler/model/all_reduce_perf.h"

namespace orch::slurm {
namespace {

constexpr std::string_view kMark = "@@orch-fabric ";  // "@@orch-fabric <i> out|err|rc <rc>"
constexpr int kTimeoutExpired = 124;
constexpr int kTimeoutKilled = 137;

Error invalid(std::string message) {
  return make_error(ErrorKind::invalid, std::move(message));
}

Result<std::vector<std::string>> pair_argv(const FabricRoundRequest& r, std::size_t i,
                                           const SlurmSpec& slurm) {
  const auto& [a, b] = r.pairs[i];
  if (a == b) return invalid("fabric pair " + a + " <-> " + b + " names one node twice");
  if (auto ok = check_node_names({a, b}, "srun --nodelist"); !ok) return ok.error();
  const std::string name = r.token + "-p" + std::to_string(i + 1);
  if (auto ok = check_token(name); !ok) return ok.error();
  const ProbeTimes t = probe_times(r.timeout_s);
  const int gpus = r.gpus_per_node > 0 ? r.gpus_per_node : 1;
  std::vector<std::string> argv = {"timeout",
                                   "--kill-after=" + detail::shortest_number(t.kill_after_s),
                                   detail::shortest_number(t.remote_s),
                                   "srun",
                                   "--job-name=" + name,
                                   "--nodes=2",
                                   "--ntasks-per-node=1",
                                   "--nodelist=" + a + "," + b,
                                   "--kill-on-bad-exit=1"};
  if (r.gpus_per_node > 0) {
    argv.push_back("--gres=" + (slurm.gres.empty() ? std::string("gpu") : slurm.gres) + ":" +
                   std::to_string(r.gpus_per_node));
  }
  if (!slurm.partition.empty()) argv.push_back("--partition=" + slurm.partition);
  if (!slurm.account.empty()) argv.push_back("--account=" + slurm.account);
  if (!slurm.qos.empty()) argv.push_back("--qos=" + slurm.qos);
  argv.push_back("--time=" + std::to_string(t.time_limit_min));
  const std::string bytes = std::to_string(r.bytes);
  for (std::string w :
       {r.all_reduce_perf, std::string("-b"), bytes, std::string("-e"), bytes, std::string("-g"),
        std::to_string(gpus), std::string("-f"), std::string("2"), std::string("-w"),
        std::string("2"), std::string("-n"), std::string("10")}) {
    argv.push_back(std::move(w));
  }
  return argv;
}

struct Section {
  std::string out, err;
  std::optional<int> rc;
};

// The last non-blank line of srun's stderr: it says why (the first may be a progress line).
std::string last_line(const std::string& text) {
  std::string out;
  for (const auto& line : split(text, '\n')) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) out = line;
  }
  return first_line(out);
}

std::string reason_of(const Section& s, double timeout_s) {
  if (s.rc && (*s.rc == kTimeoutExpired || *s.rc == kTimeoutKilled)) {
    return "did not finish within " + detail::shortest_number(timeout_s) + " s";
  }
  auto parsed = parse_all_reduce_perf(s.out);
  if (parsed && !parsed->problem().empty() && (!parsed->failure.empty() || s.rc == 0)) {
    return parsed->problem();
  }
  std::string why = s.rc ? "exit " + std::to_string(*s.rc) : "no exit status";
  if (auto err = last_line(s.err); !err.empty()) why += ": " + quote_line(err);
  if (!parsed) why += "; " + parsed.error().message;
  return why;
}

}  // namespace

Result<std::string> fabric_round_command(const FabricRoundRequest& r, const SlurmSpec& slurm) {
  if (r.pairs.empty()) return invalid("a fabric round needs at least one pair");
  if (r.all_reduce_perf.empty() || r.all_reduce_perf[0] != '/') {
    return invalid("burn_in.fabric.all_reduce_perf '" + r.all_reduce_perf +
                   "' is not an absolute path on the nodes");
  }
  if (r.bytes <= 0 || !(r.timeout_s > 0)) {
    return invalid("a fabric round needs a positive message size and time");
  }
  std::string cmd = "d=$(mktemp -d /tmp/orch-fabric.XXXXXX) || exit 1; ";
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    auto argv = pair_argv(r, i, slurm);
    if (!argv) return argv.error();
    auto line = shell_command(*argv);
    if (!line) return invalid("fabric command: " + line.error().message);
    const std::string n = std::to_string(i + 1);
    cmd += "{ " + *line + " >\"$d/" + n + ".out\" 2>\"$d/" + n +
           ".err\" </dev/null; echo $? >\"$d/" + n + ".rc\"; } & ";
  }
  cmd += "wait; for i in $(seq 1 " + std::to_string(r.pairs.size()) + "); do ";
  cmd += "echo \"" + std::string(kMark) + "$i rc $(cat \"$d/$i.rc\" 2>/dev/null)\"; ";
  cmd += "echo \"" + std::string(kMark) + "$i out\"; cat \"$d/$i.out\" 2>/dev/null; ";
  cmd += "echo \"" + std::string(kMark) + "$i err\"; tail -c 2000 \"$d/$i.err\" 2>/dev/null; ";
  cmd += "echo; done; rm -rf \"$d\"";
  return cmd;
}

std::vector<FabricPairResult> parse_fabric_round(std::string_view output,
                                                 const FabricRoundRequest& request) {
  std::map<std::size_t, Section> sections;
  Section* at = nullptr;
  std::string* into = nullptr;
  for (const auto& line : split(output, '\n')) {
    if (line.rfind(kMark, 0) == 0) {
      auto w = split(std::string_view(line).substr(kMark.size()), ' ');
      auto i = w.empty() ? std::nullopt : detail::parse_count(w[0]);
      into = nullptr;
      if (!i || *i < 1 || static_cast<std::size_t>(*i) > request.pairs.size() || w.size() < 2) {
        continue;
      }
      at = &sections[*i - 1];
      if (w[1] == "out") into = &at->out;
      if (w[1] == "err") into = &at->err;
      if (w[1] == "rc" && w.size() > 2) {
        at->rc = detail::parse_count(w[2]);
      }
      continue;
    }
    if (into) *into += line + "\n";
  }
  std::vector<FabricPairResult> out;
  for (std::size_t i = 0; i < request.pairs.size(); ++i) {
    FabricPairResult p{request.pairs[i].first, request.pairs[i].second, std::nullopt, ""};
    auto s = sections.find(i);
    if (s == sections.end()) {
      p.error = "no output";
    } else if (auto parsed = parse_all_reduce_perf(s->second.out);
               parsed && parsed->problem().empty() && s->second.rc == 0) {
      p.busbw_gb_s = parsed->busbw_gb_s();
    } else {
      p.error = reason_of(s->second, request.timeout_s);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace orch::slurm
