// See help_examples.h. The examples use the files of examples/ so that they run as written from
// the repository's root.
#include "cli/help_examples.h"

#include <map>
#include <vector>

namespace orch {
namespace {

const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> table = {
      {"",
       "orchestrate serve --config examples/clusters.yaml --state "
       "/tmp/orchestrate-example/state\n"
       "orchestrate job submit examples/jobs/toy.yaml --follow\n"
       "orchestrate job list"},
      {"cluster list", "orchestrate cluster list"},
      {"cluster nodes", "orchestrate cluster nodes alpha --limit 20"},
      {"cluster outage",
       "orchestrate cluster outage alpha --down\norchestrate cluster outage "
       "alpha --up"},
      {"cluster burn-in", "orchestrate cluster burn-in alpha --wait --timeout 300"},
      {"cluster check", "orchestrate cluster check alpha"},
      {"cluster probes", "orchestrate cluster probes alpha --node alpha-n0"},
      {"cluster add", "orchestrate cluster add examples/clusters.yaml"},
      {"cluster reload", "orchestrate cluster reload"},
      {"cluster drain", "orchestrate cluster drain alpha --reason 'provider maintenance'"},
      {"cluster activate", "orchestrate cluster activate alpha"},
      {"cluster retire", "orchestrate cluster retire alpha --reason 'lease ended'"},
      {"node list", "orchestrate node list --cluster alpha --state quarantined"},
      {"node show", "orchestrate node show alpha alpha-n3"},
      {"node quarantine", "orchestrate node quarantine alpha alpha-n1 --reason 'Xid 79'"},
      {"node release", "orchestrate node release alpha alpha-n1 --reason 'GPU replaced'"},
      {"report providers", "orchestrate report providers --window-days 90"},
      {"report cost", "orchestrate report cost --by team --since 2026-12-01"},
      {"ticket open", "orchestrate ticket open alpha 'node alpha-n1 lost its GPU' --node alpha-n1"},
      {"ticket update", "orchestrate ticket update 3 'replacement scheduled' --provider"},
      {"ticket close", "orchestrate ticket close 3 --resolution 'GPU replaced'"},
      {"ticket list", "orchestrate ticket list --cluster alpha --state open"},
      {"ticket show", "orchestrate ticket show 3"},
      {"checkpoint ls", "orchestrate checkpoint ls 7"},
      {"data ls", "orchestrate data ls"},
      {"data add", "orchestrate data add imagenet --cluster alpha --path /data/imagenet"},
      {"data replicate",
       "orchestrate data replicate imagenet --to beta\norchestrate data "
       "replicate --job 7 --to beta"},
      {"data transfers", "orchestrate data transfers --watch --interval 2"},
      {"data audit", "orchestrate data audit --cluster beta"},
      {"token create", "orchestrate token create alice --role user --teams vision,nlp"},
      {"token list", "orchestrate token list"},
      {"token revoke", "orchestrate token revoke alice"},
      {"secret set", "orchestrate secret set HF_TOKEN --from-env HF_TOKEN --teams nlp"},
      {"secret grant", "orchestrate secret grant HF_TOKEN --teams nlp,vision"},
      {"secret list", "orchestrate secret list"},
      {"secret delete", "orchestrate secret delete HF_TOKEN"},
      {"audit", "orchestrate audit --limit 20"},
      {"job submit",
       "orchestrate job submit examples/jobs/toy.yaml --follow\n"
       "orchestrate job submit examples/jobs/toy.yaml -e OMP_NUM_THREADS=4 --set priority=10 "
       "--set resources.gpus_per_node=1"},
      {"job list",
       "orchestrate job list --state running -o wide\norchestrate job list --group "
       "sweep-lr"},
      {"job show", "orchestrate job show 7\norchestrate job show 7 --series"},
      {"job logs", "orchestrate job logs 7 --follow --rank 0"},
      {"job explain", "orchestrate job explain 7"},
      {"job cancel", "orchestrate job cancel 7 8\norchestrate job cancel --group sweep-lr"},
      {"plan", "orchestrate plan 7"},
      {"serve",
       "orchestrate serve --config examples/clusters.yaml --state "
       "/tmp/orchestrate-example/state"},
      {"demo", "orchestrate demo --steps 600 --keep"},
      {"simulate", "orchestrate simulate examples/simulate/lottery.yaml --seeds 20"},
      {"completion", "source <(orchestrate completion bash)"},
  };
  return table;
}

std::string join_path(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + " " + name;
}

bool shown(const CLI::App* app) {
  return !app->get_group().empty() && !app->get_disabled();
}

// The first example line of every command under app (depth first), at most `limit`.
void first_lines(const CLI::App& app, const std::string& path, std::size_t limit,
                 std::vector<std::string>& out) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return shown(s); })) {
    if (out.size() >= limit) return;
    const std::string sub_path = join_path(path, sub->get_name());
    const std::string lines = help_example(sub_path);
    if (!lines.empty()) out.push_back(lines.substr(0, lines.find('\n')));
    first_lines(*sub, sub_path, limit, out);
  }
}

void attach(CLI::App& app, const std::string& path) {
  std::string lines = help_example(path);
  if (lines.empty()) {
    std::vector<std::string> some;
    first_lines(app, path, 4, some);
    for (const std::string& line : some) lines += (lines.empty() ? "" : "\n") + line;
  }
  if (!lines.empty()) {
    std::string body;
    std::size_t start = 0;
    while (start <= lines.size()) {
      const std::size_t nl = lines.find('\n', start);
      body += "  " + lines.substr(start, nl - start) + "\n";
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    const bool several = lines.find('\n') != std::string::npos;
    const std::string existing = app.get_footer();
    app.footer((existing.empty() ? "" : existing + "\n\n") +
               (several ? "Examples:\n" : "Example:\n") + body);
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return shown(s); })) {
    attach(*sub, join_path(path, sub->get_name()));
  }
}

}  // namespace

std::string help_example(const std::string& path) {
  const auto it = examples().find(path);
  return it == examples().end() ? std::string() : it->second;
}

void add_help_examples(CLI::App& app) {
  attach(app, "");
}

}  // namespace orch
