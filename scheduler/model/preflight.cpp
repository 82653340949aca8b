#include "scheduler/model/preflight.h"

#include <sstream>

namespace orch {
namespace {

// The non-empty lines of `text`, trimmed of spaces and a trailing '*' (sinfo marks the default
// partition so).
std::vector<std::string> listed_names(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '*')) {
      line.pop_back();
    }
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    line = line.substr(start);
    bool seen = false;
    for (const auto& o : out) seen = seen || o == line;
    if (!seen) out.push_back(line);
  }
  return out;
}

// "a, b, c" (at most 8, then "and N more").
std::string shown(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 8;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kShown) out += " and " + std::to_string(names.size() - kShown) + " more";
  return out.empty() ? "none" : out;
}

// The first line of what a command said, for a message.
std::string said(const CommandAnswer& a) {
  const std::string& text = a.err.empty() ? a.out : a.err;
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line.empty() ? "no output" : line;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  for (const auto& n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

const PreflightCheck* first_failure(const std::vector<PreflightCheck>& checks) {
  for (const auto& c : checks) {
    if (!c.ok) return &c;
  }
  return nullptr;
}

std::string misconfigured_reason(const std::string& cluster,
                                 const std::vector<PreflightCheck>& checks) {
  const PreflightCheck* first = first_failure(checks);
  if (first == nullptr) return "";
  int more = -1;
  for (const auto& c : checks) more += c.ok ? 0 : 1;
  std::string out = "cluster " + cluster + " misconfigured: " + first->name + ": " + first->why;
  if (more > 0) {
    out += " (and " + std::to_string(more) + " more failed check" + (more == 1 ? "" : "s") +
           ": orchestrate cluster check " + cluster + ")";
  }
  return out;
}

std::string preflight_line(const PreflightCheck& check) {
  std::string name = check.name;
  if (name.size() < 16) name.resize(16, ' ');
  const char* verdict = check.skipped ? "skipped" : check.ok ? "ok     " : "FAILED ";
  return name + " " + verdict + " " + check.why;
}

PreflightCheck judge_partition(const std::string& wanted, const CommandAnswer& sinfo) {
  if (!sinfo.exit_status || *sinfo.exit_status != 0) {
    return check_failed("partition", "sinfo could not list the partitions: " + said(sinfo));
  }
  const auto partitions = listed_names(sinfo.out);
  if (wanted.empty()) {
    return check_passed("partition", "none configured: jobs go to the cluster's default (" +
                                         shown(partitions) + ")");
  }
  if (contains(partitions, wanted)) return check_passed("partition", wanted + " exists");
  return check_failed("partition", "partition " + wanted + " does not exist (the cluster has " +
                                       shown(partitions) + "): fix slurm.partition");
}

PreflightCheck judge_association(const std::string& what, const std::string& key,
                                 const std::string& wanted, const CommandAnswer& sacctmgr) {
  if (wanted.empty()) return check_passed(what, "none configured");
  if (!sacctmgr.exit_status || *sacctmgr.exit_status != 0) {
    return check_passed(what, "not checked: the cluster keeps no accounting (sacctmgr: " +
                                  said(sacctmgr) + "), so Slurm does not enforce " + key);
  }
  const auto names = listed_names(sacctmgr.out);
  if (contains(names, wanted)) return check_passed(what, wanted + " exists");
  return check_failed(what, what + " " + wanted + " is not known to the cluster's accounting" +
                                (names.empty() ? std::string() : " (it has " + shown(names) + ")") +
                                ": fix " + key + " or ask the cluster's administrator");
}

PreflightCheck judge_rsync(const CommandAnswer& which) {
  if (which.exit_status && *which.exit_status == 0 && !listed_names(which.out).empty()) {
    return check_passed("rsync", "rsync is at " + listed_names(which.out).front());
  }
  return check_failed("rsync",
                      "rsync is not on the login node's PATH for the ssh user (checkpoints and "
                      "datasets are copied with it): install rsync there");
}

PreflightCheck judge_container_runtime(const std::string& runtime, const CommandAnswer& answer) {
  const bool answered = answer.exit_status && *answer.exit_status == 0;
  if (runtime == "pyxis") {
    if (answered && answer.out.find("--container-image") != std::string::npos) {
      return check_passed("containers", "srun takes --container-image (pyxis is loaded)");
    }
    return check_failed("containers",
                        "slurm.containers is pyxis but srun --help lists no --container-image: "
                        "install pyxis (and enroot) and list it in plugstack.conf, or set "
                        "slurm.containers to none");
  }
  if (answered && !answer.out.empty()) {
    return check_passed("containers", runtime + " answers: " + listed_names(answer.out).front());
  }
  return check_failed("containers", runtime + " does not answer on the login node (" +
                                        said(answer) + "): install it on every node, or set " +
                                        "slurm.containers to none");
}

PreflightCheck judge_storage(const std::string& root, const std::string& where,
                             const CommandAnswer& answer) {
  if (answer.exit_status && *answer.exit_status == 0) {
    return check_passed("storage-root", root + " is writable " + where);
  }
  return check_failed("storage-root", root + " is not writable " + where + ": " + said(answer) +
                                          ": fix storage.root or its permissions");
}

}  // namespace orch
