// KubernetesSite: the Secret that carries an attempt's secret_env values (kube_secret.h). No
// message here quotes a request or answer body: the requests hold the values, and an answer
// may echo them; only the Status message (which names objects, not data) is quoted.

#include "adapters/kubernetes/kube_site.h"

#include "adapters/kubernetes/kube_secret.h"

namespace orch {
namespace {

bool is_2xx(int status) {
  return status >= 200 && status < 300;
}

}  // namespace

Error KubernetesSite::secret_refused(const std::string& verb, const std::string& secret,
                                     const KubeResponse& answer) const {
  std::string why;
  if (auto st = kube::parse_api_status(answer.body); st && !st->message.empty()) {
    why = ": " + st->message;
  }
  const std::string what = "site " + spec_.name + ": the API server answered " +
                           std::to_string(answer.status) + " to " + verb + " the Secret " + secret +
                           " in namespace " + namespace_ + why;
  // 401 and 5xx: the credentials or the server, as for every other call (the site is silent).
  if (answer.status == 401 || answer.status >= 500) {
    return make_error(ErrorKind::unreachable, what);
  }
  if (answer.status == 403) {
    return make_error(
        ErrorKind::forbidden,
        what + ". A job with secret_env gets its values through a Secret of its own: the " +
            "site's credentials need the RBAC verbs `create secrets`, `patch secrets` and " +
            "`delete secrets` in namespace " + namespace_ +
            " (for example: kubectl create role orchestrate-secrets -n " + namespace_ +
            " --verb=create,patch,delete --resource=secrets, and a RoleBinding of it to the " +
            "kubeconfig's user or service account)");
  }
  return make_error(ErrorKind::invalid, what);
}

Result<bool> KubernetesSite::create_secret(const kube::KubeLaunchPlan& plan) {
  auto r = client_->request("POST", plan.secrets_path, plan.secret_body);
  if (!r) return r.error();
  if (is_2xx(r->status)) return true;
  // AlreadyExists: an earlier try of this launch made it (the name is the token's); the owner
  // patch after the Job writes this try's values into it.
  if (r->status == 409) return false;
  return secret_refused("create", plan.secret_name, *r);
}

Result<void> KubernetesSite::own_secret(const kube::KubeLaunchPlan& plan,
                                        const KubeResponse& job_answer, bool adopted,
                                        bool refresh) {
  std::string uid;
  if (!adopted) {
    if (auto job = kube::parse_job(job_answer.body)) uid = job->uid;
  }
  if (uid.empty()) {  // a 409 carries a Status, not the Job
    auto got = call("GET", plan.job_path, "", {});
    if (!got) return got.error();
    auto job = kube::parse_job(got->body);
    if (!job || job->uid.empty()) {
      return make_error(ErrorKind::io, "site " + spec_.name + ": the Job " + plan.job_name +
                                           " read back has no metadata.uid to own its Secret " +
                                           plan.secret_name);
    }
    uid = job->uid;
  }
  const std::string patch =
      kube::secret_owner_patch(plan.job_name, uid, refresh ? &plan.secret_values : nullptr);
  auto r = client_->request("PATCH", plan.secret_path, patch, kube::kMergePatchType);
  // No answer: the next try of the launch adopts the Job and patches again.
  if (!r) return r.error();
  if (is_2xx(r->status)) return Ok{};
  Error refused = secret_refused("patch", plan.secret_name, *r);
  if (refused.kind == ErrorKind::unreachable) return refused;
  // A Job found from an earlier try runs with the Secret it had (its owner was set then, or
  // cancel deletes it).
  if (adopted) return Ok{};
  // A new Job whose Secret would outlive it: both go, and the launch fails saying why.
  (void)client_->request("DELETE", plan.job_path, kube::delete_background_body());
  delete_secret(plan.secret_path);
  return refused;
}

void KubernetesSite::delete_secret(const std::string& path) {
  (void)client_->request("DELETE", path, kube::delete_background_body());
}

}  // namespace orch
