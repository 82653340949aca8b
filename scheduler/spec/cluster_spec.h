#pragma once
// One rented cluster ("site") as declared in the clusters file.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/common/project_version.h"
#include "scheduler/model/accelerators.h"
#include "scheduler/model/container.h"
#include "scheduler/model/fabric_step.h"
#include "scheduler/model/live_watch_spec.h"
#include "scheduler/model/pod_settings.h"
#include "scheduler/model/price.h"
#include "scheduler/model/rate_limits.h"
#include "scheduler/model/site_types.h"
#include "scheduler/spec/provider_catalog.h"

namespace orch {

// How the orchestrator reaches a remote site's login node (provider slurm).
struct SshSpec {
  std::string host;
  int port = 22;
  std::string user;
  std::string key_file;            // private key; "~/" expands to $HOME
  std::string key_passphrase_env;  // environment variable holding the key's passphrase, if any
  // Host-key checking is strict: the server's key must match the pinned fingerprint
  // ("SHA256:<base64>", as ssh-keygen -lf prints it) or an entry of the known_hosts file.
  // trust_on_first_use accepts an unknown key once (and records it in known_hosts when one is
  // given); a key that changed is refused either way.
  std::string host_key;
  std::string known_hosts;
  bool trust_on_first_use = false;
  double connect_timeout_s = 10.0;
  double command_timeout_s = 60.0;  // one remote command, e.g. sbatch or squeue
};

// How attempts are submitted to a Slurm cluster.
// slurm.job_options: allowed (default), pinned (the cluster's value stands: a job that names
// another value is not placed there) or forbidden (a job that sets it at all is not).
enum class SlurmOptionRule { allowed, pinned, forbidden };

struct SlurmSpec {
  std::string partition;     // sbatch --partition (empty: the cluster's default)
  std::string account;       // sbatch --account
  std::string qos;           // sbatch --qos
  std::string gres = "gpu";  // GRES requested per node as <gres>:<gpus_per_node>, e.g. gpu:h100
  std::string reservation;   // sbatch --reservation (issue 40)
  std::string constraint;    // sbatch --constraint
  bool exclusive = false;    // sbatch --exclusive
  // What a job's own `slurm:` section may do with each option (partition, account, qos,
  // reservation, constraint, exclusive): absent means allowed (the job's value wins).
  std::map<std::string, SlurmOptionRule> job_options;

  std::string time_limit;  // sbatch --time (empty: the partition's limit)
  // Sent to the job's batch shell this long before its time limit, so that it can checkpoint.
  std::string pre_term_signal = "USR1";
  int pre_term_s = 120;
  // How a job's `container:` runs here (scheduler/model/container.h): pyxis (srun
  // --container-image ...), apptainer (apptainer exec under the agent), or none (such jobs are
  // not placed here).
  ContainerRuntime containers = ContainerRuntime::none;
};

// The image built from agents/Dockerfile for this release: the static agent on an empty base.
inline constexpr const char* kDefaultAgentImage =
    "ghcr.io/orchestrate-dev/orchestrate-agent:" ORCH_PROJECT_VERSION;
// kubernetes.agent_image that turns the agent off.
inline constexpr const char* kNoAgentImage = "none";

// How attempts run on a Kubernetes cluster (provider kubernetes; issue 6).
struct KubernetesSpec {
  std::string kubeconfig;  // path; "~/" expands to $HOME
  std::string context;     // empty: the kubeconfig's current-context
  std::string namespace_;  // empty: the context's namespace, else "default"
  // What every pod gets (pod.image: the container image the job's command runs in); a job's
  // own `kubernetes:` section is merged over it (scheduler/model/pod_settings.h).
  PodSettings pod;
  // Whether jobs may mount directories of the node (hostPath volumes of a job file; the
  // cluster's own volumes may always).
  bool allow_host_path = false;
  // Kueue: the LocalQueue Jobs are submitted to (created suspended, labelled
  // kueue.x-k8s.io/queue-name; Kueue admits them by unsuspending). "": no Kueue.
  std::string queue;
  // The image of the short helper pods that list, hash and delete checkpoints on the volumes
  // (it needs sh, find, stat and sha256sum of GNU coreutils) and run burn-in probes
  // (`agent` must be in it). "": pod.image.
  std::string helper_image;
  std::string agent = "orchestrate-agent";      // the agent's path in helper_image (probes)
  std::string gpu_resource = "nvidia.com/gpu";  // extended resource requested per pod
  int termination_grace_s = 120;                // time to save a checkpoint after SIGTERM
  // A multi-pod attempt whose pods are not all running this long after its Job was created
  // ends as gang_timeout (infra): a gang that cannot all be scheduled must not hold the pods
  // that were.
  int gang_timeout_s = 300;
  // The agent in every pod (issue 44): an init container of this image copies its
  // /orchestrate-agent into an emptyDir, and the job's command runs under it
  // (adapters/kubernetes/kube_agent_container.h). "none": no agent, the job's shell is the
  // container's command (no heartbeats, no per-task events).
  std::string agent_image = kDefaultAgentImage;
  // Where the pods' agents push their records home (scheduler/pushed_records.h):
  // https://host[:port] of this server as the pods reach it. "": no pushing.
  std::string push_url;
};

// How attempts run on this machine (provider local). run_as: the user every job's processes run
// as, while the agent beside it stays the server's user (docs/security.md, "The host"); "":
// the server's own user, which a root server refuses (server/server.cpp). A user name only: that
// the user exists is checked where the server starts, as this spec does no I/O.
struct LocalSpec {
  std::string run_as;
  // A job's `container:` here: apptainer (apptainer exec under the agent), or none (refused).
  ContainerRuntime containers = ContainerRuntime::none;
};

// burn_in.gpu (issue 43): the GPU parts of the probe. Present at all, the probe also checks
// that each node shows the cluster's gpus_per_node GPUs (the gpu-count check).
struct GpuBurnInSpec {
  bool configured = false;           // the section is present
  std::string nvidia_smi;            // path on the nodes; "": nvidia-smi in PATH; "none": skip
  int dcgm_level = 0;                // dcgmi diag -r LEVEL; 0: no DCGM diagnostic
  std::string dcgmi = "dcgmi";       // path on the nodes, or a name looked up in PATH
  std::string torch_python;          // interpreter of the bundled torch probe; "": none
  double torch_s = 20;               // its time budget
  double min_tflops_ratio = 0.8;     // of the cluster median, per GPU
  double min_datasheet_ratio = 0.5;  // of the accelerator's peak (only when it ran on a GPU)
};

// Burn-in (issue 4): every node runs `orchestrate-agent probe`; nodes far below the cluster's
// median, or failing a check, are quarantined.
struct BurnInSpec {
  bool on_join = false;            // a new cluster goes pending -> burn-in -> active
  double min_compute_ratio = 0.9;  // of the cluster median GEMM throughput
  double min_io_ratio = 0.9;       // of the cluster median filesystem throughput
  std::string dir;                 // filesystem probed (empty: checkpoint root, else storage)
  double io_mb = 64;               // written and read back per node
  double compute_s = 1.0;          // GEMM benchmark time per node
  double timeout_s = 300;          // the whole round
  GpuBurnInSpec gpu;               // GPU probes (issue 43)
  FabricSpec fabric;               // the fabric step after the probes (issue 43)
};

// When a node is taken out of service (scheduler/health/quarantine.h).
struct QuarantineSpec {
  int failures = 2;       // failures implicated in a node ...
  double window_h = 168;  // ... within this many hours quarantine it
  double cooldown_h = 1;  // before a passing probe may release it
  int retire_after = 3;   // the third quarantine retires it
};

// How this site's login node reaches another site's login node to pull from it (rsync over
// ssh run there): the address and the key and known_hosts files as paths on this site.
struct PeerSpec {
  std::string host;
  int port = 22;
  std::string user;
  std::string key_file;     // on this site's login node
  std::string known_hosts;  // on this site's login node
};

// MFU-aware throttling of transfers that read or write this site (scheduler/data/throttle.h).
struct ThrottleSpec {
  double mfu_drop_percent = 3;  // a job's MFU this far below its baseline cuts the cap
  double decrease = 0.5;        // multiplicative decrease
  double increase_mb_s = 0;     // additive increase per interval; 0: a tenth of the cap
  double min_mb_s = 1;          // never below this
  double interval_s = 10;       // between two changes
};

// Data movement (issue 5).
struct DataSpec {
  double bwlimit_mb_s = 0;  // cap on transfers that read or write this site; 0: none
  // UTC windows when dataset transfers may touch this site, "HH:MM-HH:MM" (may wrap midnight);
  // empty: any time. Checkpoint replication is never held back by a window (only throttled).
  std::vector<std::string> windows;
  std::map<std::string, PeerSpec> pull_from;  // source cluster -> how to reach it from here
  std::string datasets_root;      // where staged datasets go; empty: <storage root>/datasets
  double audit_interval_s = 600;  // how often every copy here is checked; 0: never
  ThrottleSpec throttle;
};

// A cluster ordered but not delivered yet (issue 15): it waits in pending-delivery until its
// site first lists a node (or a person activates it), and the scorecard shows how late it came.
struct DeliverySpec {
  std::string promised;                     // "2026-12-10" as written (UTC midnight), empty: none
  std::optional<std::int64_t> promised_ms;  // the same, in ms since the epoch
};

struct ClusterSpec {
  std::string name;
  std::string vendor;  // who rents it out (scorecards group by it); empty: the cluster's name
  std::string provider = "local";        // a name in provider_catalog()
  int nodes = 1;                         // node count (local: virtual nodes)
  int gpus_per_node = 1;                 // local: slots standing in for GPUs
  std::string accelerator = "cpu-slot";  // key in the accelerator table
  std::optional<double> peak_tflops;     // overrides the table's peak per accelerator
  // Run directories live here (local: default <state>/sites/<name>; slurm: a directory on the
  // cluster's shared filesystem, required).
  std::string storage_root;
  std::string checkpoint_root;  // where checkpoints of jobs on this site live
  // storage.node_local: a directory on each node's own disk (the same path on every node; "{node}"
  // in it stands for the node's name, for nodes that share one disk, as the local provider's
  // do). Empty: the site keeps no node-local copies (tiered checkpoints, issue 38).
  std::string node_local_root;
  // Hot spares (issue 38): nodes the site keeps burned in and held idle (paid for) so that a
  // gang that loses a node relaunches at once on its survivors and a spare. 0: none.
  int spares = 0;
  double unreachable_grace_s = 180.0;  // how long a silent site keeps its jobs before failover
  int poll_interval_ms = 1000;         // how often the site worker polls
  SshSpec ssh;                         // provider slurm
  SlurmSpec slurm;                     // provider slurm
  KubernetesSpec kubernetes;           // provider kubernetes
  LocalSpec local;                     // provider local
  BurnInSpec burn_in;
  LiveWatchSpec live_watch;  // the agent's watch of the GPUs while a job runs (issue 43)
  QuarantineSpec quarantine;
  DataSpec data;
  DeliverySpec delivery;
  PriceSpec price;  // issue 45

  const std::string& vendor_or_name() const { return vendor.empty() ? name : vendor; }

  int total_gpus() const { return nodes * gpus_per_node; }
  // FLOP/s per GPU (model/accelerators.h): what MFU and the goodput estimate divide by.
  std::optional<double> peak_flops_per_gpu() const {
    return orch::peak_flops_per_gpu(accelerator, peak_tflops);
  }

  // Storage orchestrate lists, copies to and deletes from (issue 5): as its provider says.
  bool lists_storage() const {
    const ProviderTraits* p = find_provider(provider);
    return p != nullptr && p->lists_storage;
  }
  // Where copies of checkpoints and datasets go on this site.
  std::string checkpoints_dir() const {
    return checkpoint_root.empty() ? storage_root + "/checkpoints" : checkpoint_root;
  }
  std::string datasets_dir() const {
    return data.datasets_root.empty() ? storage_root + "/datasets" : data.datasets_root;
  }
};

struct ServerSpec {
  std::string bind = "127.0.0.1";
  int port = 8080;
  // The names clients may use for this server in the Host header, beside the loopback names
  // and the bind address (any other is refused, against DNS rebinding; docs/security.md).
  std::vector<std::string> hosts;
  // server.tls: serve HTTPS with this certificate chain and private key (PEM files on the
  // server); both empty: plain HTTP, which only a loopback address may carry.
  struct Tls {
    std::string cert;
    std::string key;
  } tls;
  bool serves_tls() const { return !tls.cert.empty(); }
  // server.rate_limits: the changes a second each role's callers may make (docs/config.md).
  RateLimits rate_limits;
};

// A webhook (clusters file `webhooks:`): the events it is told of, POSTed to url with an
// HMAC-SHA256 signature of the body made with the secret (adapters/webhook/README.md).
struct WebhookSpec {
  std::string name;
  std::string url;                  // http:// or https://
  std::vector<std::string> events;  // of webhook_event_names()
  SecretSource secret;              // the signing key, read by the server when it starts
  std::string format = "json";      // json | slack (a Slack-compatible {"text": ...})
};

// The events a webhook may ask for, in the order docs/config.md lists them.
inline const std::vector<std::string>& webhook_event_names() {
  static const std::vector<std::string> names = {
      "job-succeeded", "job-failed", "attempt-infra",   "node-quarantined", "node-retired",
      "mfu-drop",      "site-down",  "checkpoint-lost", "io-stall",         "budget"};
  return names;
}

// A team's share of the fleet (clusters file `teams:`, docs/scheduling.md): the GPUs its jobs
// may hold fleet-wide and on named clusters. Beyond it they may borrow idle GPUs, the first
// taken back when a team within its quota needs them.
struct TeamQuota {
  std::optional<int> gpus;                  // fleet-wide; absent: no fleet-wide bound
  std::map<std::string, int> cluster_gpus;  // per cluster; a cluster absent here: no bound
  bool borrow = true;                       // may its jobs run beyond the quota on idle GPUs
  // The highest priority a `user` may give the team's jobs (docs/scheduling.md); absent: the
  // highest class the team may use.
  std::optional<int> max_priority;
  // A monthly budget (`teams: {vision: {budget: {...}}}`, issue 45): money in the fleet's
  // currency or GPU-hours per UTC calendar month. At 80% and 100% a `budget` webhook fires (once
  // each per month); past 100% the team's new jobs wait with the reason, or, with over set to a
  // priority class, run at that class's value instead.
  struct Budget {
    bool configured = false;
    std::optional<double> money;      // per month, in PriceSpec::currency
    std::optional<double> gpu_hours;  // per month
    std::string over = "hold";        // "hold" | a priority class name
  } budget;
  // The team's placement objective; absent: the fleet's (SchedulingSpec::objective).
  std::optional<std::string> objective;
};

// How the brain orders and preempts work (clusters file `priority_classes:` and `teams:`,
// docs/config.md).
struct SchedulingSpec {
  // Named priorities a job spec may give as `priority: hero`; higher is placed first, and may
  // preempt lower (docs/scheduling.md).
  std::map<std::string, int> priority_classes;
  // Classes only some teams' jobs may use (`{value: 1000, teams: [llm]}`); a class absent here
  // is open to every team. Operators and admins may use any class for any team.
  std::map<std::string, std::vector<std::string>> class_teams;
  // Quotas by team. Empty: no quotas, every job may use any idle GPU. Otherwise a team absent
  // here (and a job with no team) has a quota of 0: everything it runs is borrowed.
  std::map<std::string, TeamQuota> teams;
  bool quotas() const { return !teams.empty(); }
  // `placement: {objective: goodput | goodput_per_cost}` (issue 45): what placement maximises,
  // expected useful FLOP/s, or that per unit of money (clusters without a price count as free
  // only when every cluster is unpriced; docs/scheduling.md).
  std::string objective = "goodput";
};

// A secret the clusters file names (`secrets:`, docs/security.md): read by the server from its
// source when it starts and on every reload, and given to the jobs of the teams it is granted
// to (every team when `teams` is empty) that name it in their secret_env.
struct ConfiguredSecret {
  std::string name;
  SecretSource source;
  std::vector<std::string> teams;
};

struct ClustersFile {
  ServerSpec server;
  std::vector<ClusterSpec> clusters;
  std::vector<WebhookSpec> webhooks;
  SchedulingSpec scheduling;
  std::vector<ConfiguredSecret> secrets;
};

// The cluster of that name, or null.
inline const ClusterSpec* find_cluster(const std::vector<ClusterSpec>& clusters,
                                       std::string_view name) {
  for (const ClusterSpec& c : clusters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace orch
