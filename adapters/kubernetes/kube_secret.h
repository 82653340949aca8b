#pragma once
// The Secret of an attempt (issue 37): a job's secret_env values never appear in its Job
// object. Anyone who may read Jobs in the namespace reads their env, and the API server keeps
// the Job's spec as written; so the values go into a v1 Secret of their own (type Opaque, the
// values base64 in `data`, one key per variable), and the container's env names them with
// valueFrom.secretKeyRef. The kubelet reads the Secret when it creates the container.
//
// The order of a launch (KubernetesSite::launch): the Secret first (so that no pod ever starts
// without it), then the Job, then a merge patch that makes the Job the Secret's owner
// (ownerReferences: batch/v1 Job, its name and uid, controller false, blockOwnerDeletion
// false), so that Kubernetes' garbage collector deletes the Secret with the Job. The site also
// deletes it itself when the attempt ended or was cancelled (clusters whose collector is off).
//
// Pure: strings in, strings out (tested in tests/unit/kube/kube_secret_test.cpp).

#include <map>
#include <string>

namespace orch::kube {

// "<job>-secret": a DNS-1123 label, since a Job name (job_name_for_token) is one of at most
// 56 characters.
std::string secret_name_for(const std::string& job_name);

// /api/v1/namespaces/<ns>/secrets (POST a Secret here; "/<name>" to PATCH or DELETE one).
std::string secrets_path(const std::string& namespace_);

// The v1 Secret as JSON: metadata {name, namespace, labels}, type Opaque, data {var: base64}.
std::string secret_manifest(const std::string& name, const std::string& namespace_,
                            const std::map<std::string, std::string>& labels,
                            const std::map<std::string, std::string>& values);

// A JSON merge patch (application/merge-patch+json) that makes the Job own the Secret. With
// values, it also writes them (a Secret found from an earlier try of the same launch gets
// this try's values; keys it had besides stay, and belong to the same attempt).
std::string secret_owner_patch(const std::string& job_name, const std::string& job_uid,
                               const std::map<std::string, std::string>* values = nullptr);

// The Content-Type of those patches.
inline constexpr const char* kMergePatchType = "application/merge-patch+json";

}  // namespace orch::kube
