#include "scheduler/model/job_shape.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace orch {
namespace {

// `sh -c` scripts that pick the job's shell on the node; the command is their $1 (never part
// of the script text, so nothing in it is parsed twice). $0 is "orch-shell" (what an error of
// sh itself names).
constexpr const char* kAutoShell =
    "if command -v bash >/dev/null 2>&1; then exec bash -c \"$1\"; fi; exec /bin/sh -c \"$1\"";
constexpr const char* kNoBash =
    "printf 'orchestrate: the job asks for shell %s, but this node has no bash in PATH "
    "(PATH=%s); use shell: sh or install bash\\n' \"$2\" \"$PATH\" >&2; exit 127";

std::string need_bash(const char* exec_line) {
  return std::string("command -v bash >/dev/null 2>&1 || { ") + kNoBash + "; }; " + exec_line;
}

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

constexpr std::size_t kMaxOptionBytes = 256;

}  // namespace

std::vector<std::string> job_shell_argv(std::string_view shell, const std::string& command) {
  if (shell == kShellSh) return {"/bin/sh", "-c", command};
  if (shell == kShellBash) {
    return {"/bin/sh", "-c", need_bash("exec bash -c \"$1\""), "orch-shell", command, "bash"};
  }
  if (shell == kShellBashLogin) {
    return {"/bin/sh",    "-c",    need_bash("exec bash -l -c \"$1\""),
            "orch-shell", command, "bash-login"};
  }
  return {"/bin/sh", "-c", kAutoShell, "orch-shell", command};
}

std::string slurm_option_value(const SlurmJobOptions& o, std::string_view name) {
  if (name == "partition") return o.partition;
  if (name == "account") return o.account;
  if (name == "qos") return o.qos;
  if (name == "reservation") return o.reservation;
  if (name == "constraint") return o.constraint;
  if (name == "exclusive") return !o.exclusive ? "" : *o.exclusive ? "true" : "false";
  return "";
}

std::string slurm_option_problem(std::string_view name, std::string_view value) {
  if (value.empty()) return "it is empty";
  if (value.size() > kMaxOptionBytes) {
    return "it is " + std::to_string(value.size()) + " bytes long, more than " +
           std::to_string(kMaxOptionBytes);
  }
  if (value[0] == '-') return "it starts with '-', which sbatch would read as another option";
  const std::string_view extra = name == "constraint"  ? std::string_view("&|[]*:,()!")
                                 : name == "partition" ? std::string_view(",")
                                                       : std::string_view();
  for (char c : value) {
    if (is_name_char(c) || extra.find(c) != std::string_view::npos) continue;
    const auto u = static_cast<unsigned char>(c);
    std::string what = c == '\n'   ? "a newline"
                       : c == '\0' ? "a NUL byte"
                       : c == ' '  ? "a blank"
                       : u < 0x20 || u >= 0x7f
                           ? "the byte 0x" + std::string(1, "0123456789abcdef"[u >> 4]) +
                                 "0123456789abcdef"[u & 15]
                           : "'" + std::string(1, c) + "'";
    return "it holds " + what + "; sbatch --" + std::string(name) + " takes letters, digits and " +
           (extra.empty() ? std::string("'.', '_', '-'")
                          : "'.', '_', '-', '" + std::string(extra) + "'");
  }
  return "";
}

SlurmJobOptions merge_slurm_options(const SlurmJobOptions& cluster, const SlurmJobOptions& job) {
  SlurmJobOptions out = cluster;
  if (!job.partition.empty()) out.partition = job.partition;
  if (!job.account.empty()) out.account = job.account;
  if (!job.qos.empty()) out.qos = job.qos;
  if (!job.reservation.empty()) out.reservation = job.reservation;
  if (!job.constraint.empty()) out.constraint = job.constraint;
  if (job.exclusive) out.exclusive = job.exclusive;
  return out;
}

nlohmann::json slurm_job_options_to_json(const SlurmJobOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (std::string_view name : kSlurmJobOptionNames) {
    if (name == "exclusive") continue;
    std::string v = slurm_option_value(o, name);
    if (!v.empty()) j[std::string(name)] = v;
  }
  if (o.exclusive) j["exclusive"] = *o.exclusive;
  return j;
}

Result<SlurmJobOptions> slurm_job_options_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return make_error(ErrorKind::invalid, "slurm options are not an object");
  SlurmJobOptions o;
  try {
    o.partition = j.value("partition", std::string());
    o.account = j.value("account", std::string());
    o.qos = j.value("qos", std::string());
    o.reservation = j.value("reservation", std::string());
    o.constraint = j.value("constraint", std::string());
    if (j.contains("exclusive")) o.exclusive = j.at("exclusive").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorKind::invalid, std::string("slurm options: ") + e.what());
  }
  return o;
}

std::optional<std::int64_t> parse_memory_mib(std::string_view text) {
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p == text.data()) return std::nullopt;
  std::string_view unit = text.substr(static_cast<std::size_t>(p - text.data()));
  std::int64_t scale = 0;
  if (!unit.empty()) {
    const char u = unit[0];
    scale = u == 'M' ? 1 : u == 'G' ? 1024 : u == 'T' ? 1024 * 1024 : 0;
    unit.remove_prefix(1);
  }
  if (unit == "i" || unit == "iB" || unit == "B") unit = {};
  if (scale == 0 || !unit.empty()) return std::nullopt;
  constexpr std::int64_t kMaxMiB = std::int64_t{1} << 30;  // 1 PiB
  if (n < 1 || n > kMaxMiB / scale) return std::nullopt;
  return n * scale;
}

std::string memory_mib_text(std::int64_t mib) {
  if (mib > 0 && mib % (1024 * 1024) == 0) return std::to_string(mib / (1024 * 1024)) + "T";
  if (mib > 0 && mib % 1024 == 0) return std::to_string(mib / 1024) + "G";
  return std::to_string(mib) + "M";
}

}  // namespace orch
