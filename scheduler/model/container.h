#pragma once
// Issue 40, item 4: a job's `container:` (the image its tasks run in, bind mounts, the working
// directory inside, variables passed through) and how each cluster runs it, as the cluster
// declares (`slurm.containers`, `local.containers`; Kubernetes runs every pod in an image).
// Pure: the options and argv built here are handed to srun or the agent as separate words, and
// every value was checked by the spec reader (container_value_error), so none can be an option
// of its own or break the lists pyxis and apptainer split on `,` and `:`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

struct ContainerMount {
  std::string source;  // an absolute path on the node
  std::string target;  // an absolute path inside the container
  bool read_only = false;
  bool operator==(const ContainerMount&) const = default;
};

struct ContainerSpec {
  // pyxis: [USER@][REGISTRY#]IMAGE[:TAG] or a squashfs path; apptainer: docker://..., a .sif
  // path; Kubernetes: the pod's image. Empty: the job runs on the node, in no container.
  std::string image;
  std::vector<ContainerMount> mounts;
  // The working directory inside; empty: the job's ORCH_WORKDIR, or its run directory, which
  // are mounted at the same path.
  std::string workdir;
  std::vector<std::string> env;  // variables of the job the image's own may not override
  bool empty() const { return image.empty(); }
  bool operator==(const ContainerSpec&) const = default;
};

// How a cluster runs a job's container: none (it refuses such jobs), pyxis (srun
// --container-image ...: every task, the agent included, runs in the container) or apptainer
// (`apptainer exec --nv ... IMAGE SHELL -c COMMAND` under the agent); pod is Kubernetes's own
// (the pods' image), never declared in a clusters file.
enum class ContainerRuntime { none, pyxis, apptainer, pod };
std::string_view runtime_name(ContainerRuntime r);
std::optional<ContainerRuntime> runtime_from_name(std::string_view name);

// Why `value` cannot be an image / a mount path / a variable name / a working directory, or
// nullopt when it can.
std::optional<std::string> image_error(std::string_view value);
std::optional<std::string> container_path_error(std::string_view value);
std::optional<std::string> env_name_error(std::string_view value);

// "SRC:DST[:ro|:rw]" read; nullopt with `why` set when it is not one.
std::optional<ContainerMount> parse_mount(std::string_view text, std::string& why);
std::string mount_text(const ContainerMount& m);  // "SRC:DST" or "SRC:DST:ro"

// The directories orchestrate mounts in at the same paths, each once: empty ones and those
// inside another of them left out, the rest in order.
std::vector<std::string> bind_dirs(const std::vector<std::string>& dirs);

// srun's pyxis options for the job: --container-image, --container-mounts (the job's mounts
// after `bind`, the directories orchestrate needs inside at the same path: the agent's, the run
// directory, the code), --container-workdir (the spec's, else `default_workdir`) and
// --container-env. Each is one word, "--name=value".
std::vector<std::string> pyxis_options(const ContainerSpec& c, const std::vector<std::string>& bind,
                                       const std::string& default_workdir);

// The words that run the job's shell in the container under apptainer: apptainer exec --nv
// --bind <bind, then mounts> --pwd <workdir> IMAGE (apptainer passes the environment on); the
// caller appends the shell and its arguments.
std::vector<std::string> apptainer_prefix(const ContainerSpec& c,
                                          const std::vector<std::string>& bind,
                                          const std::string& default_workdir);

}  // namespace orch
