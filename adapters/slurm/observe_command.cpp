#include "adapters/slurm/observe_command.h"

#include <charconv>
#include <utility>

#include "adapters/slurm/parse_util.h"
#include "adapters/slurm/slurm_parse.h"
#include "adapters/ssh/shell_quote.h"

namespace orch::slurm {
namespace {

constexpr std::string_view kTasksMark = "@@orchestrate-tasks ";
constexpr std::string_view kEventsSuffix = ".events.jsonl";

// o TOKEN, with $r the runs directory: what the token's run directory holds (the names of
// run_paths), builtins only unless it has event files. `echo` after tail ends a last line that
// was written without its newline.
constexpr std::string_view kReadRunDir =
    "o() {\n"
    "  printf '@T %s\\n' \"$1\"\n"
    "  IFS= read -r l <\"$r/$1/gang\" && printf '@G %s\\n' \"$l\"\n"
    "  IFS= read -r l <\"$r/$1/node_lost\" && printf '@M %s\\n' \"$l\"\n"
    "  [ -e \"$r/$1/setup_failed\" ] && sed 's/^/@S /' \"$r/$1/setup_failed\"\n"
    "  set -- \"$r/$1/tasks\"/*.events.jsonl\n"
    "  [ -e \"$1\" ] && tail -v -n 1 -- \"$@\" && echo\n"
    "}\n";

Error invalid(const std::string& message) {
  return make_error(ErrorKind::invalid, message);
}

// The rank in ".../tasks/<rank>.events.jsonl", from tail's "==> <path> <==" header.
std::optional<int> header_rank(std::string_view line) {
  constexpr std::string_view kOpen = "==> ", kClose = " <==";
  if (line.size() < kOpen.size() + kClose.size() || line.substr(0, kOpen.size()) != kOpen ||
      line.substr(line.size() - kClose.size()) != kClose) {
    return std::nullopt;
  }
  std::string_view path = line.substr(kOpen.size(), line.size() - kOpen.size() - kClose.size());
  std::string_view name = path.substr(path.rfind('/') + 1);
  if (name.size() <= kEventsSuffix.size() ||
      name.substr(name.size() - kEventsSuffix.size()) != kEventsSuffix) {
    return std::nullopt;
  }
  return detail::parse_count(name.substr(0, name.size() - kEventsSuffix.size()));
}

// Reads the lines after the mark into `out`.
void read_task_lines(std::string_view rest, ObserveOutput& out) {
  TaskSnapshot* run = nullptr;
  TaskRecord* file = nullptr;  // the event file whose last line comes next
  for (std::string_view line : detail::non_blank_lines(rest)) {
    if (line.substr(0, 3) == "@T ") {
      run = &out.tasks[std::string(line.substr(3))];
      file = nullptr;
    } else if (run == nullptr) {
      continue;
    } else if (line.substr(0, 3) == "@G ") {
      run->gang = parse_gang_file(line.substr(3));
    } else if (line.substr(0, 3) == "@M ") {
      run->marker = parse_marker(line.substr(3));
    } else if (line.substr(0, 3) == "@S ") {
      // The setup's failure (issue 40), one line of its marker at a time.
      if (!run->setup_failed) run->setup_failed.emplace();
      *run->setup_failed += std::string(line.substr(3)) + "\n";
    } else if (line.substr(0, 4) == "==> ") {
      auto rank = header_rank(line);
      file = nullptr;
      if (!rank) continue;
      TaskRecord empty;
      empty.rank = *rank;
      empty.empty = true;
      run->tasks.push_back(empty);
      file = &run->tasks.back();
    } else if (file != nullptr) {
      *file = parse_task_record(file->rank, line);
      file = nullptr;
    }
  }
}

}  // namespace

Result<std::string> observe_command(const std::vector<std::string>& tokens,
                                    const std::string& storage_root) {
  for (const std::string& token : tokens) {
    if (auto ok = check_token(token); !ok) return ok.error();
  }
  auto squeue = shell_command(squeue_by_names_argv(tokens));
  auto runs = shell_quote(runs_dir(storage_root));
  if (!squeue || !runs) {
    return invalid("observe command: " + (!squeue ? squeue.error() : runs.error()).message);
  }
  std::string script = *squeue + "\ns=$?\nr=" + *runs + "\n" + std::string(kReadRunDir) +
                       "{\nprintf '\\n" + std::string(kTasksMark) + "%s\\n' \"$(date +%s%3N)\"\n" +
                       "for t in";
  for (const std::string& token : tokens) script += " " + shell_quote(token).value();
  script += "; do o \"$t\"; done\n} 2>/dev/null | cut -c 1-4096\nexit $s\n";
  auto command = shell_command({"/bin/sh", "-c", script});
  if (!command) return invalid("observe command: " + command.error().message);
  return *command;
}

ObserveOutput split_observe_output(std::string_view output) {
  ObserveOutput out;
  // The script's printf puts a newline before the mark, so it starts a line even when squeue
  // printed nothing.
  const std::size_t mark = output.find("\n" + std::string(kTasksMark));
  if (mark == std::string_view::npos) {
    out.squeue = std::string(output);
    return out;
  }
  out.squeue = std::string(output.substr(0, mark));
  std::string_view rest = output.substr(mark + 1);
  std::size_t eol = rest.find('\n');
  std::string_view clock = detail::trim(rest.substr(kTasksMark.size(), eol - kTasksMark.size()));
  out.tasks_read = true;
  std::int64_t now = 0;
  auto [end, ec] = std::from_chars(clock.data(), clock.data() + clock.size(), now);
  if (ec == std::errc{} && end == clock.data() + clock.size() && !clock.empty()) out.now_ms = now;
  if (eol != std::string_view::npos) read_task_lines(rest.substr(eol + 1), out);
  return out;
}

Result<std::string> node_lost_command(const RunPaths& paths, const std::string& token,
                                      const NodeLostMarker& marker) {
  const std::string tmp = paths.node_lost + ".tmp";
  auto write = shell_command({"printf", "%s\\n", marker_line(marker)});
  auto target = shell_quote(tmp);
  auto move = shell_command({"mv", "-f", tmp, paths.node_lost});
  auto cancel = shell_command({"scancel", "--name=" + token});
  if (!write || !target || !move || !cancel) {
    return invalid("the node_lost marker of " + token + " cannot be quoted");
  }
  return *write + " >" + *target + " && " + *move + "; " + *cancel;
}

}  // namespace orch::slurm
