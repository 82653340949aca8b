#include "scheduler/spec/job_shape_section.h"

#include <string>

namespace orch {

using yaml::MapView;

namespace {
constexpr int kMaxCpusPerTask = 4096;

std::string example(std::string_view name) {
  if (name == "constraint") return "node features such as a100 or \"a100&ib\"";
  const char* such = name == "partition" ? "gpu"
                     : name == "account" ? "proj-a"
                     : name == "qos"     ? "high"
                                         : "maint";
  return "a Slurm " + std::string(name) + " name such as " + such;
}
}  // namespace

std::vector<std::string_view> slurm_job_option_keys() {
  return {std::begin(kSlurmJobOptionNames), std::end(kSlurmJobOptionNames)};
}

void read_resource_shape(MapView& res, JobSpec& spec) {
  res.read_int("cpus_per_task", spec.cpus_per_task, 1, kMaxCpusPerTask,
               "CPUs for each task such as 8 (sbatch --cpus-per-task)");
  const yaml::Field* mem = res.find("memory");
  if (res.reader().failed() || !mem || mem->value.IsNull()) return;
  const std::string text = mem->value.IsScalar() ? mem->value.Scalar() : std::string();
  if (auto mib = parse_memory_mib(text)) {
    spec.memory_mb = *mib;
    return;
  }
  res.reader().fail(res.value_position("memory"),
                    "\"memory\" must be a size with a unit, got " + yaml::describe(mem->value),
                    "memory per node such as 64G, 512M or 1T (binary units, as sbatch --mem; at "
                    "least 1M, at most 1024T)");
}

void read_slurm_job_options(MapView& slurm, SlurmJobOptions& out) {
  yaml::Reader& r = slurm.reader();
  std::string* fields[] = {&out.partition, &out.account, &out.qos, &out.reservation,
                           &out.constraint};
  for (std::size_t i = 0; i < std::size(fields) && !r.failed(); ++i) {
    const std::string_view name = kSlurmJobOptionNames[i];
    const yaml::Field* f = slurm.find(name);
    if (!f) continue;
    const std::string key(name);
    if (!f->value.IsScalar()) {
      r.fail(slurm.value_position(name),
             "\"" + key + "\" must be a string, got " + yaml::describe(f->value), example(name));
      return;
    }
    const std::string& v = f->value.Scalar();
    if (std::string why = slurm_option_problem(name, v); !why.empty()) {
      r.fail(slurm.value_position(name), "\"" + key + "\" cannot be passed to sbatch: " + why,
             example(name));
      return;
    }
    *fields[i] = v;
  }
  if (slurm.has("exclusive")) {
    bool exclusive = false;
    slurm.read_bool("exclusive", exclusive, "true (whole nodes, sbatch --exclusive) or false");
    if (!r.failed()) out.exclusive = exclusive;
  }
}

void read_shell_and_slurm(MapView& job, JobSpec& spec) {
  job.read_string("shell", spec.shell, yaml::kNonEmpty, "bash, sh or bash-login");
  if (!job.reader().failed() && job.has("shell") && !is_job_shell(spec.shell)) {
    job.reader().fail(job.value_position("shell"), "\"shell\" is \"" + spec.shell + "\"",
                      "bash, sh or bash-login (bash -l -c, which reads the login profile for "
                      "`module` and conda), or no \"shell\" for bash where the node has it");
    return;
  }
  if (!job.has("slurm")) return;
  MapView slurm = job.child("slurm", "slurm", slurm_job_option_keys(),
                            "a map such as {partition: gpu, account: proj, qos: high}");
  if (!job.reader().failed()) read_slurm_job_options(slurm, spec.slurm);
}

}  // namespace orch
