#include "scheduler/spec/secrets_section.h"

#include "scheduler/spec/secret_source_reader.h"

namespace orch {
namespace {

constexpr std::string_view kExample =
    "a map such as {hf-token: {file: /etc/orchestrate/hf.token, teams: [nlp]}, wandb: {env: "
    "WANDB_API_KEY}}";

void read_one(yaml::Reader& r, const YAML::Node& key, const YAML::Node& value,
              std::vector<ConfiguredSecret>& out) {
  ConfiguredSecret secret;
  secret.name = key.Scalar();
  const std::string context = "secret \"" + secret.name + "\"";
  yaml::MapView source(r, value, context, {"file", "env", "teams"},
                       "{file: /abs/path, teams: [TEAM, ...]} or {env: VAR}");
  if (r.failed()) return;
  if (!read_secret_source(source, context, secret.source)) return;
  source.read_string_list("teams", secret.teams, yaml::kName,
                          "the teams whose jobs may use it, such as [nlp, vision]");
  if (r.failed()) return;
  out.push_back(std::move(secret));
}

}  // namespace

void read_secrets(const yaml::MapView& file, std::vector<ConfiguredSecret>& out) {
  yaml::Reader& r = file.reader();
  const yaml::Field* field = file.find("secrets");
  if (!field || field->value.IsNull()) return;
  if (!field->value.IsMap()) {
    r.fail(file.value_position("secrets"),
           "\"secrets\" must be a map, got " + yaml::describe(field->value), kExample);
    return;
  }
  for (auto it = field->value.begin(); it != field->value.end() && !r.failed(); ++it) {
    const YAML::Node k = it->first;  // copies: see MapView::read_string_map
    const YAML::Node v = it->second;
    if (!k.IsScalar() || !yaml::is_name(k.Scalar())) {
      r.fail(yaml::position_of(k),
             "a secret's name must be 1 to 64 letters, digits, \".\", \"_\" or \"-\", got " +
                 yaml::describe(k),
             kExample);
      return;
    }
    read_one(r, k, v, out);
  }
}

}  // namespace orch
