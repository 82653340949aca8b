#include "adapters/kubernetes/kube_site.h"

#include <algorithm>
#include <cstdio>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/kubernetes/kube_manifest.h"
#include "adapters/kubernetes/kube_secret.h"
#include "scheduler/common/clock.h"
#include "scheduler/common/percent_encoding.h"
#include "scheduler/model/output_chunk.h"
#include "scheduler/model/workdir.h"

namespace orch {
namespace {

constexpr std::size_t kMaxLineRead = 1 << 20;     // one observe reads at most 1 MiB of output
constexpr std::size_t kMaxOutputRead = 16 << 20;  // one read_output returns at most 16 MiB

const char* kManagedSelector = "app.kubernetes.io/managed-by=orchestrate";

}  // namespace

KubernetesSite::KubernetesSite(ClusterSpec spec, KubeTarget target, const PushHome* push)
    : spec_(std::move(spec)), push_(push), namespace_(target.namespace_) {
  client_ = std::make_unique<KubeClient>(std::move(target), spec_.name);
  informer_ = std::make_unique<kube::PodInformer>(*client_, kube::pods_path(namespace_),
                                                  percent_encode(kManagedSelector));
  informer_->start();
}

KubernetesSite::~KubernetesSite() {
  informer_->stop();
}

Result<KubeResponse> KubernetesSite::call(const std::string& method, const std::string& path,
                                          const std::string& body, std::initializer_list<int> ok) {
  auto r = client_->request(method, path, body);
  if (!r) return r.error();
  return check_answer(method, path, std::move(*r), ok);
}

Result<KubeResponse> KubernetesSite::check_answer(const std::string& method,
                                                  const std::string& path, KubeResponse answer,
                                                  std::initializer_list<int> ok) {
  if ((answer.status >= 200 && answer.status < 300) ||
      std::find(ok.begin(), ok.end(), answer.status) != ok.end()) {
    return answer;
  }
  std::string why = answer.body.substr(0, 300);
  if (auto st = kube::parse_api_status(answer.body); st && !st->message.empty()) {
    why = st->message;
  }
  // 5xx: the API server is there but not working; the site is silent rather than the job bad.
  ErrorKind kind = answer.status >= 500                           ? ErrorKind::unreachable
                   : answer.status == 401 || answer.status == 403 ? ErrorKind::unreachable
                                                                  : ErrorKind::invalid;
  return make_error(kind, "site " + spec_.name + ": " + method + " " + path + " answered " +
                              std::to_string(answer.status) + ": " + why);
}

Result<SiteInventory> KubernetesSite::inventory() {
  auto r = call("GET", kube::nodes_path(), "", {});
  if (!r) return r.error();
  auto nodes = kube::parse_node_list(r->body, spec_.kubernetes.gpu_resource);
  if (!nodes) {
    return make_error(ErrorKind::io, "site " + spec_.name + ": " + nodes.error().message);
  }
  retire_idle_helper();
  SiteInventory inv;
  inv.nodes = kube::node_infos(*nodes);
  std::lock_guard<std::mutex> lock(mu_);
  nodes_ = std::move(*nodes);
  return inv;
}

Result<LaunchResult> KubernetesSite::launch(const LaunchRequest& request) {
  // Its agents push their records home when the server serves HTTPS and the cluster says
  // where the pods reach it (kubernetes.push_url).
  std::optional<kube::PushLaunch> push;
  if (push_ != nullptr && push_->credential && !spec_.kubernetes.push_url.empty()) {
    push = kube::PushLaunch{spec_.kubernetes.push_url, push_->ca_pem,
                            push_->credential(request.token)};
  }
  auto plan = kube::make_launch_plan(request, spec_, namespace_, push ? &*push : nullptr);
  if (!plan) return plan.error();
  // The Secret first, so that no pod of the Job ever starts without its values.
  const bool has_secret = !plan->secret_body.empty();
  bool made_secret = false;  // by this call: a launch that surely failed takes it back
  if (has_secret) {
    auto made = create_secret(*plan);
    if (!made) return made.error();
    made_secret = *made;
  }
  const auto not_created = [&](const Error& e) {
    if (made_secret) delete_secret(plan->secret_path);
    return e;
  };
  if (!plan->service_body.empty()) {
    if (auto r = call("POST", plan->services_path, plan->service_body, {409}); !r) {
      return not_created(r.error());  // the Job was not asked for
    }
  }
  auto answer = client_->request("POST", plan->jobs_path, plan->job_body);
  // No answer, or a 5xx: the Job may exist all the same. The Secret stays for the next try of
  // the launch, which finds both; a 4xx is a Job that surely was not created.
  if (!answer) return answer.error();
  const int status = answer->status;
  auto r = check_answer("POST", plan->jobs_path, std::move(*answer), {409});
  if (!r) return status < 500 ? not_created(r.error()) : r.error();
  LaunchResult launched{plan->job_name, {}};
  // 409 AlreadyExists: this token was launched before (a retried launch): the same launch,
  // adopted. (A 409 on the Service alone is not: the Job may never have been created.)
  launched.adopted = r->status == 409;
  if (has_secret) {
    if (auto owned = own_secret(*plan, *r, launched.adopted, !made_secret); !owned) {
      return owned.error();
    }
  }
  return launched;
}

Result<std::optional<kube::KubeJobInfo>> KubernetesSite::job_of(const std::string& token) {
  auto r = call("GET",
                kube::jobs_path(namespace_) +
                    "?labelSelector=" + percent_encode(kube::token_label_selector(token)),
                "", {});
  if (!r) return r.error();
  auto jobs = kube::parse_jobs(r->body);
  if (!jobs) return make_error(ErrorKind::io, "site " + spec_.name + ": " + jobs.error().message);
  if (jobs->empty()) return std::optional<kube::KubeJobInfo>{};
  return std::optional<kube::KubeJobInfo>{jobs->front()};
}

Result<std::vector<kube::PodInfo>> KubernetesSite::pods_of(const std::string& token) {
  if (auto cached = informer_->pods(token)) return *cached;
  auto r = call("GET",
                kube::pods_path(namespace_) +
                    "?labelSelector=" + percent_encode(kube::token_label_selector(token)),
                "", {});
  if (!r) return r.error();
  auto pods = kube::parse_pods(r->body);
  if (!pods) return make_error(ErrorKind::io, "site " + spec_.name + ": " + pods.error().message);
  return *pods;
}

Result<std::optional<LaunchResult>> KubernetesSite::find(const std::string& token) {
  auto job = job_of(token);
  if (!job) return job.error();
  if (!*job) return std::optional<LaunchResult>{};
  return std::optional<LaunchResult>{LaunchResult{(*job)->name, {}}};
}

Result<std::string> KubernetesSite::log_of(const std::vector<kube::PodInfo>& pods,
                                           std::size_t limit) {
  const kube::PodInfo* first = nullptr;
  for (const auto& p : pods) {
    if (!first || p.completion_index.value_or(0) < first->completion_index.value_or(0)) first = &p;
  }
  if (!first || first->node_name.empty()) return std::string{};
  auto r = client_->request(
      "GET", kube::pod_log_path(namespace_, first->name) + "?limitBytes=" + std::to_string(limit));
  if (!r) return r.error();
  if (r->status != 200) return std::string{};  // not started yet, or already gone
  return r->body;
}

Result<RunObservation> KubernetesSite::observe(const std::string& token,
                                               std::uint64_t output_offset) {
  auto pods = pods_of(token);
  if (!pods) return pods.error();
  std::optional<kube::KubeJobInfo> job;
  if (pods->empty()) {
    auto j = job_of(token);
    if (!j) return j.error();
    job = *j;
  }
  kube::AttemptView view;
  bool ran = false;  // the site saw it run
  {
    std::lock_guard<std::mutex> lock(mu_);
    view = kube::map_attempt(*pods, job, nodes_.empty() ? nullptr : &nodes_);
    if (view.phase == RunPhase::running) ran_.insert(token);
    ran = ran_.count(token) > 0;
  }
  // Kueue took the Job's quota back (preemption), or says why it waits (kube_site_kueue.cpp).
  // Preempted, the next attempt resumes from the newest checkpoint rather than this Job
  // starting its pods over once admitted again.
  if (auto ok = read_kueue(token, ran, job, view); !ok) return ok.error();
  std::vector<TaskAlert> alerts;
  apply_pushed(token, *pods, view, alerts);
  if (view.phase == RunPhase::exited) {
    std::lock_guard<std::mutex> lock(mu_);
    ran_.erase(token);
  }
  if (view.phase == RunPhase::exited && view.exit && view.exit->exit_code == kSetupFailedExit &&
      view.exit->cause != ExitCause::node_lost && view.exit->cause != ExitCause::preempted) {
    read_setup_failure(token, *view.exit);
  }
  // A gang that has not all run in time gives its pods back (the API server's creation times
  // against our clock: a skew of seconds does not matter next to minutes).
  if (view.phase == RunPhase::queued || view.phase == RunPhase::running) {
    if (auto late =
            kube::gang_timed_out(*pods, SystemClock().now_ms(), spec_.kubernetes.gang_timeout_s)) {
      view.phase = RunPhase::exited;
      view.exit = *late;
      view.pods_left = true;
    }
  }
  RunObservation obs;
  obs.phase = view.phase;
  obs.exit = view.exit;
  obs.nodes = view.nodes;
  obs.alerts = std::move(alerts);
  obs.site_job_id = kube::job_name_for_token(token);
  obs.next_offset = output_offset;
  // Why it waits (Kueue's message, or the scheduler's Unschedulable one): the job's reason.
  if (view.phase == RunPhase::queued) obs.waiting = view.note;
  if (view.pods_left) {
    (void)cancel(token);  // nothing may linger once the attempt is over
  } else if (view.phase == RunPhase::exited) {
    // Its pods are done and none will start again (backoffLimit 0): the Secret's values are of
    // no more use to it, so they leave the cluster now rather than with the Job.
    delete_secret(kube::secrets_path(namespace_) + "/" +
                  kube::secret_name_for(kube::job_name_for_token(token)));
  }
  if (view.phase == RunPhase::running || view.phase == RunPhase::exited) {
    // pods/log has no byte offset: read from the start up to what is new, bounded.
    auto log = log_of(*pods, static_cast<std::size_t>(output_offset) + kMaxLineRead);
    if (!log) return log.error();
    if (log->size() > output_offset) {
      OutputLines lines =
          split_output_chunk(std::string_view(*log).substr(output_offset), output_offset,
                             kMaxLineRead, view.phase == RunPhase::exited);
      obs.new_lines = std::move(lines.lines);
      obs.next_offset = lines.next_offset;
    }
  }
  return obs;
}

Result<void> KubernetesSite::cancel(const std::string& token) {
  const std::string name = kube::job_name_for_token(token);
  auto r = call("DELETE", kube::jobs_path(namespace_) + "/" + name, kube::delete_background_body(),
                {404});
  if (!r) return r.error();
  // The headless Service of a multi-node attempt (absent for single-node ones).
  (void)client_->request("DELETE",
                         kube::services_path(namespace_) + "/" + kube::service_name_for(name),
                         kube::delete_background_body());
  // The Secret of an attempt with secret_env (absent otherwise). The garbage collector would
  // delete it with the Job; this does not count on it.
  delete_secret(kube::secrets_path(namespace_) + "/" + kube::secret_name_for(name));
  return Ok{};
}

Result<std::string> KubernetesSite::read_output(const std::string& token, std::uint64_t offset,
                                                std::size_t max_bytes) {
  auto pods = pods_of(token);
  if (!pods) return pods.error();
  const std::size_t want = std::min(max_bytes, kMaxOutputRead);
  auto log = log_of(*pods, static_cast<std::size_t>(offset) + want);
  if (!log) return log.error();
  if (log->size() <= offset) return std::string{};
  return log->substr(static_cast<std::size_t>(offset), want);
}

Result<std::unique_ptr<ClusterPort>> make_kubernetes_site(const ClusterSpec& cluster,
                                                          const SiteContext& context) {
  const KubernetesSpec& k = cluster.kubernetes;
  auto target = load_kube_target(k.kubeconfig, k.context, k.namespace_);
  if (!target) {
    return make_error(target.error().kind,
                      "cluster " + cluster.name + ": " + target.error().message);
  }
  for (const auto& w : target->warnings) {
    std::fprintf(stderr, "cluster %s: %s\n", cluster.name.c_str(), w.c_str());
  }
  return std::unique_ptr<ClusterPort>(
      std::make_unique<KubernetesSite>(cluster, std::move(*target), context.push_home));
}

}  // namespace orch
