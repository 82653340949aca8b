#include "scheduler/spec/secret_source_reader.h"

namespace orch {

bool read_secret_source(yaml::Reader& r, const YAML::Node& node, const std::string& context,
                        SecretSource& out) {
  yaml::MapView source(r, node, context, {"file", "env"}, "{file: PATH} or {env: VAR}");
  if (r.failed()) return false;
  return read_secret_source(source, context, out);
}

bool read_secret_source(yaml::MapView& source, const std::string& context, SecretSource& out) {
  yaml::Reader& r = source.reader();
  SecretSource s;
  source.read_string("file", s.file, yaml::kNonEmpty, "an absolute path on the server");
  source.read_string("env", s.env, yaml::kEnvVarName, "a variable of the server's environment");
  if (r.failed()) return false;
  if (s.file.empty() == s.env.empty()) {
    r.fail(source.position(), context + " must name exactly one source",
           "{file: /abs/path} or {env: VAR}");
    return false;
  }
  if (!s.file.empty() && s.file.front() != '/') {
    r.fail(
        source.value_position("file"),
        context + ".file is a relative path: the server reads it, from its own working directory",
        "an absolute path");
    return false;
  }
  out = s;
  return true;
}

}  // namespace orch
