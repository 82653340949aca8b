#include "scheduler/spec/container_section.h"

#include <algorithm>
#include <string>
#include <vector>

namespace orch {
namespace {

using yaml::MapView;

constexpr std::size_t kMaxMounts = 64;

// One value of `container` checked by `why_not`; the first bad one fails the reader at `key`.
template <typename WhyNot>
bool check(MapView& c, std::string_view key, std::string_view value, WhyNot why_not,
           std::string_view expected) {
  if (c.reader().failed()) return false;
  const std::optional<std::string> bad = why_not(value);
  if (!bad) return true;
  c.reader().fail(
      c.value_position(key),
      "\"container." + std::string(key) + "\" value \"" + std::string(value) + "\" " + *bad,
      expected);
  return false;
}

void read_mounts(MapView& c, ContainerSpec& out) {
  std::vector<std::string> texts;
  c.read_string_list("mounts", texts, yaml::kNonEmpty, "a list of \"SRC:DST\" or \"SRC:DST:ro\"");
  if (c.reader().failed()) return;
  if (texts.size() > kMaxMounts) {
    c.reader().fail(c.value_position("mounts"),
                    "\"container.mounts\" has " + std::to_string(texts.size()) + " entries",
                    "at most " + std::to_string(kMaxMounts));
    return;
  }
  for (const auto& text : texts) {
    std::string why;
    auto m = parse_mount(text, why);
    if (!m) {
      c.reader().fail(c.value_position("mounts"),
                      "\"container.mounts\" entry \"" + text + "\" " + why,
                      "\"SRC:DST\" or \"SRC:DST:ro\", both absolute paths of letters, digits "
                      "and . _ - / + @");
      return;
    }
    out.mounts.push_back(*m);
  }
}

}  // namespace

void read_container(MapView& job, ContainerSpec& out) {
  if (job.reader().failed() || !job.has("container")) return;
  MapView c = job.child("container", "container", {"image", "mounts", "workdir", "env"},
                        "a map with image (and optionally mounts, workdir, env)");
  if (!c.require("image", "the image the job's tasks run in")) return;
  ContainerSpec spec;
  c.read_string("image", spec.image, yaml::kNonEmpty,
                "an image such as nvcr.io#nvidia/pytorch:24.05-py3");
  if (!check(c, "image", spec.image, image_error,
             "an image such as nvcr.io#nvidia/pytorch:24.05-py3 or docker://python:3.11")) {
    return;
  }
  read_mounts(c, spec);
  c.read_string("workdir", spec.workdir, yaml::kNonEmpty, "an absolute path inside the image");
  if (!spec.workdir.empty() && !check(c, "workdir", spec.workdir, container_path_error,
                                      "an absolute path such as /workspace")) {
    return;
  }
  c.read_string_list("env", spec.env, yaml::kNonEmpty, "a list of variable names");
  for (const auto& name : spec.env) {
    if (!check(c, "env", name, env_name_error, "variable names such as HF_TOKEN")) return;
  }
  if (!c.reader().failed()) out = std::move(spec);
}

void read_container_runtime(MapView& section, ContainerRuntime& out,
                            const std::vector<ContainerRuntime>& allowed) {
  std::string choices;
  for (ContainerRuntime r : allowed) {
    choices += (choices.empty() ? "" : " or ") + std::string(runtime_name(r));
  }
  std::string name;
  section.read_string("containers", name, yaml::kNonEmpty, choices);
  if (section.reader().failed() || name.empty()) return;
  const auto runtime = runtime_from_name(name);
  if (!runtime || std::find(allowed.begin(), allowed.end(), *runtime) == allowed.end()) {
    section.reader().fail(section.value_position("containers"),
                          "\"containers\" is \"" + name + "\"", choices);
    return;
  }
  out = *runtime;
}

}  // namespace orch
