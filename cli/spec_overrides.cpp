// See spec_overrides.h.
#include "cli/spec_overrides.h"

#include <yaml-cpp/yaml.h>

#include <cctype>

namespace orch {
namespace {

bool is_variable_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) != 0) return false;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

bool is_index(const std::string& key) {
  return !key.empty() && key.size() <= 9 &&
         key.find_first_not_of("0123456789") == std::string::npos;
}

std::string kind_of(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  if (node.IsNull()) return "empty";
  return "a value (" + node.Scalar() + ")";
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

// Sets root[path] = value; false with error (about `arg`, the --set as typed) when it cannot.
bool set_path(YAML::Node root, const std::string& arg, const std::string& path,
              const YAML::Node& value, std::string& error) {
  const std::vector<std::string> keys = split_path(path);
  for (const std::string& k : keys) {
    if (k.empty()) {
      error = "--set " + arg + ": an empty key in " + path +
              "; expected path=value with keys joined by dots, such as --set "
              "resources.gpus_per_node=4";
      return false;
    }
  }
  YAML::Node node = root;
  std::string walked;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    const bool last = i + 1 == keys.size();
    if (node.IsSequence()) {
      if (!is_index(key) || std::stoul(key) >= node.size()) {
        error = "--set " + arg + ": " + walked + " is a list of " + std::to_string(node.size()) +
                " item(s), and " + key + " is not the index of one (0 to " +
                std::to_string(node.size() == 0 ? 0 : node.size() - 1) + ")";
        return false;
      }
      YAML::Node next = node[std::stoul(key)];
      if (last) {
        node[std::stoul(key)] = value;
        return true;
      }
      node.reset(next);
    } else if (node.IsMap() || node.IsNull()) {
      if (last) {
        node[key] = value;
        return true;
      }
      if (!node[key].IsDefined() || node[key].IsNull()) {
        node[key] = YAML::Node(YAML::NodeType::Map);
      }
      YAML::Node next = node[key];
      node.reset(next);
    } else {
      error = "--set " + arg + ": " + walked + " is " + kind_of(node) +
              ", not a map or a list, so it has no key " + key;
      return false;
    }
    walked += (walked.empty() ? "" : ".") + key;
  }
  return true;
}

bool apply_set(YAML::Node root, const std::string& arg, std::string& error) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "--set " + arg + ": expected path=value, such as --set resources.gpus_per_node=4 or " +
            "--set priority=10";
    return false;
  }
  const std::string text = arg.substr(eq + 1);
  if (text.empty()) {
    error = "--set " + arg + ": no value after '='; write \"\" for an empty string";
    return false;
  }
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    error = "--set " + arg + ": the value is not YAML (" + e.msg + "); quote it, such as --set " +
            arg.substr(0, eq) + "='\"...\"'";
    return false;
  }
  return set_path(root, arg, arg.substr(0, eq), value, error);
}

bool apply_env(YAML::Node root, const std::string& arg, std::string& error) {
  const std::size_t eq = arg.find('=');
  const std::string name = arg.substr(0, eq);
  if (eq == std::string::npos || !is_variable_name(name)) {
    error = "-e " + arg +
            ": expected KEY=VALUE, KEY a variable name (letters, digits and '_', not starting "
            "with a digit), such as -e LR=3e-4";
    return false;
  }
  YAML::Node env = root["env"];
  if (env.IsDefined() && !env.IsNull() && !env.IsMap()) {
    error = "-e " + arg + ": the spec's env is " + kind_of(env) + ", not a map of variables";
    return false;
  }
  root["env"][name] = arg.substr(eq + 1);
  return true;
}

bool apply_after(YAML::Node root, const std::string& arg, std::string& error) {
  const std::size_t colon = arg.find(':');
  const std::string job = arg.substr(0, colon);
  const std::string state = colon == std::string::npos ? "succeeded" : arg.substr(colon + 1);
  if (job.empty() || (state != "succeeded" && state != "ended")) {
    error = "--after " + arg +
            ": expected NAME or ID, then optionally :succeeded (the default) or :ended, such as "
            "--after train or --after 12:ended";
    return false;
  }
  YAML::Node after = root["after"];
  if (after.IsDefined() && !after.IsNull() && !after.IsSequence()) {
    error = "--after " + arg + ": the spec's after is " + kind_of(after) + ", not a list";
    return false;
  }
  YAML::Node entry;
  entry["job"] = job;
  entry["state"] = state;
  root["after"].push_back(entry);
  return true;
}

}  // namespace

bool apply_spec_overrides(const std::string& text, const std::string& source,
                          const SpecOverrides& overrides, std::string& out, std::string& error) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    error = source + ":" + std::to_string(e.mark.line + 1) + ": not YAML (" + e.msg +
            "), so -e and --set cannot change it";
    return false;
  }
  if (!root.IsMap()) {
    error = source + " is " + kind_of(root) + ", not a job spec (a map such as examples/jobs/" +
            "toy.yaml), so -e and --set cannot change it";
    return false;
  }
  for (const std::string& s : overrides.sets) {
    if (!apply_set(root, s, error)) return false;
  }
  for (const std::string& e : overrides.env) {
    if (!apply_env(root, e, error)) return false;
  }
  for (const std::string& a : overrides.after) {
    if (!apply_after(root, a, error)) return false;
  }
  YAML::Emitter emitter;
  emitter << root;
  out = std::string(emitter.c_str()) + "\n";
  return true;
}

}  // namespace orch
