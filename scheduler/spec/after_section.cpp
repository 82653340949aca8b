// `after:` in a job file (issue 45): the jobs a job waits for, and the variable that names the
// newest verified checkpoint of each.
#include "scheduler/spec/after_section.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace orch {

std::string_view to_string(AfterState s) {
  return s == AfterState::ended ? "ended" : "succeeded";
}

std::optional<AfterState> parse_after_state(std::string_view s) {
  if (s == "succeeded") return AfterState::succeeded;
  if (s == "ended") return AfterState::ended;
  return std::nullopt;
}

namespace {

constexpr std::string_view kExample =
    "a list such as [{job: train}, {job: 12, state: ended}] (state: succeeded or ended)";

// One entry of the list; false when it recorded an error.
bool read_entry(yaml::Reader& r, const YAML::Node& node, std::size_t i, AfterSpec& out) {
  const std::string context = "after[" + std::to_string(i) + "]";
  yaml::MapView entry(r, node, context, {"job", "state", "id"}, "a map such as {job: train}");
  if (r.failed()) return false;
  entry.require("job", "the name or id of the job to wait for, such as train or 12");
  entry.read_string("job", out.job, yaml::kName, "a job's name such as train, or its id");
  std::string state;
  entry.read_string("state", state, yaml::kNonEmpty, "succeeded or ended");
  if (r.failed()) return false;
  if (entry.has("state")) {
    auto parsed = parse_after_state(state);
    if (!parsed) {
      r.fail(entry.value_position("state"),
             context + ".state is \"" + state + "\", not a state a job can be waited for",
             "succeeded (the default: it starts once that job succeeded) or ended (once it "
             "ended in any way)");
      return false;
    }
    out.state = *parsed;
  }
  // The stored form: the id the brain resolved at submit.
  if (const yaml::Field* id = entry.find("id")) {
    const std::string text = id->value.IsScalar() ? id->value.Scalar() : "";
    long long n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || p != text.data() + text.size() || n < 1) {
      r.fail(entry.value_position("id"), context + ".id must be a job id",
             "a positive integer such as 12");
      return false;
    }
    out.id = n;
  }
  return true;
}

}  // namespace

void read_after(const yaml::MapView& job, JobSpec& spec) {
  yaml::Reader& r = job.reader();
  const yaml::Field* field = job.find("after");
  if (r.failed() || !field || field->value.IsNull()) return;
  if (!field->value.IsSequence()) {
    r.fail(job.value_position("after"), "\"after\" must be a list", kExample);
    return;
  }
  std::vector<AfterSpec> out;
  for (std::size_t i = 0; i < field->value.size(); ++i) {
    AfterSpec entry;
    if (!read_entry(r, field->value[i], i, entry)) return;
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const AfterSpec& a) { return a.job == entry.job; });
    if (same != out.end()) {
      r.fail(yaml::position_of(field->value[i]),
             "job \"" + entry.job + "\" is listed twice in \"after\"", "each job once");
      return;
    }
    out.push_back(std::move(entry));
  }
  spec.after = std::move(out);
}

std::string after_checkpoint_env(std::string_view job_name) {
  std::string out = "ORCH_AFTER_";
  for (char c : job_name) {
    const auto u = static_cast<unsigned char>(std::toupper(static_cast<unsigned char>(c)));
    out += (std::isupper(u) || std::isdigit(u)) ? static_cast<char>(u) : '_';
  }
  return out + "_CHECKPOINT";
}

}  // namespace orch
