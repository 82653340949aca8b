#include "scheduler/spec/workdir_section.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/model/launch_limits.h"

namespace orch {
namespace {

using yaml::MapView;

constexpr std::size_t kMaxSourceBytes = 4096;  // PATH_MAX

bool is_workdir_source(std::string_view s) {
  return !s.empty() && s.size() <= kMaxSourceBytes;
}

constexpr yaml::StringRule kWorkdirSource{is_workdir_source,
                                          "a directory path such as ./src (at most 4096 bytes)"};
constexpr yaml::StringRule kSha256{is_sha256_hex, "64 lowercase hexadecimal digits (a SHA-256)"};

void read_workdir(MapView& job, JobSpec& spec) {
  const yaml::Field* field = job.find("workdir");
  if (job.reader().failed() || !field || field->value.IsNull()) return;
  if (field->value.IsScalar()) {
    job.read_string("workdir", spec.workdir.source, kWorkdirSource,
                    "a directory of this machine such as ./src, packed and uploaded by "
                    "`orchestrate job submit`");
    return;
  }
  MapView w =
      job.child("workdir", "workdir", {"source", "sha256", "bytes"}, "a directory such as ./src");
  w.read_string("source", spec.workdir.source, kWorkdirSource, "a directory path such as ./src");
  w.read_string("sha256", spec.workdir.sha256, kSha256, "the archive's SHA-256");
  const yaml::Field* bytes = w.find("bytes");
  if (w.reader().failed() || !bytes) return;
  const std::optional<long long> n = yaml::scalar_to_integer(bytes->value);
  if (!n || *n < 0) {
    w.reader().fail(
        w.value_position("bytes"),
        "\"workdir.bytes\" must be a size in bytes, got " + yaml::describe(bytes->value),
        "an integer >= 0");
    return;
  }
  spec.workdir.bytes = static_cast<std::int64_t>(*n);
}

// setup: a string, or a list of strings (lines) joined with "\n".
void read_setup(MapView& job, JobSpec& spec) {
  const yaml::Field* field = job.find("setup");
  if (job.reader().failed() || !field || field->value.IsNull()) return;
  constexpr std::string_view kExpected =
      "shell commands such as \"pip install -e .\", or a list of such lines";
  if (field->value.IsSequence()) {
    std::vector<std::string> lines;
    job.read_string_list("setup", lines, yaml::kAnyString, kExpected);
    if (job.reader().failed()) return;
    std::string text;
    for (const auto& line : lines) text += (text.empty() ? "" : "\n") + line;
    spec.setup = std::move(text);
  } else {
    job.read_string("setup", spec.setup, yaml::kNonEmpty, kExpected);
    if (job.reader().failed()) return;
  }
  if (spec.setup.size() > limits::kMaxArgBytes) {
    job.reader().fail(job.value_position("setup"),
                      "\"setup\" is " + std::to_string(spec.setup.size()) + " bytes long",
                      "at most " + std::to_string(limits::kMaxArgBytes) +
                          " bytes; put a longer script in the workdir and run that");
  }
}

}  // namespace

bool is_sha256_hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void read_workdir_and_setup(MapView& job, JobSpec& spec) {
  read_workdir(job, spec);
  read_setup(job, spec);
  job.read_bool("setup_per_node", spec.setup_per_node, "true or false");
  if (!job.reader().failed() && spec.setup_per_node && spec.setup.empty()) {
    job.reader().fail(job.value_position("setup_per_node"),
                      "\"setup_per_node\" is true but the job has no \"setup\"",
                      "a \"setup\" to run on every node, or no \"setup_per_node\"");
  }
}

}  // namespace orch
