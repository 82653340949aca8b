#include "adapters/kubernetes/kube_secret.h"

#include <nlohmann/json.hpp>

#include "scheduler/common/base64.h"

namespace orch::kube {
namespace {

using Json = nlohmann::ordered_json;

Json data_of(const std::map<std::string, std::string>& values) {
  Json data = Json::object();
  for (const auto& [key, value] : values) data[key] = encode_base64(value);
  return data;
}

}  // namespace

std::string secret_name_for(const std::string& job_name) {
  return job_name + "-secret";
}

std::string secrets_path(const std::string& namespace_) {
  return "/api/v1/namespaces/" + namespace_ + "/secrets";
}

std::string secret_manifest(const std::string& name, const std::string& namespace_,
                            const std::map<std::string, std::string>& labels,
                            const std::map<std::string, std::string>& values) {
  Json secret = {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", {{"name", name}, {"namespace", namespace_}, {"labels", labels}}},
      {"type", "Opaque"},
      {"data", data_of(values)},
  };
  return secret.dump();
}

std::string secret_owner_patch(const std::string& job_name, const std::string& job_uid,
                               const std::map<std::string, std::string>* values) {
  Json owner = {
      {"apiVersion", "batch/v1"},    {"kind", "Job"},      {"name", job_name}, {"uid", job_uid},
      {"blockOwnerDeletion", false}, {"controller", false}};
  Json patch = {{"metadata", {{"ownerReferences", Json::array({owner})}}}};
  if (values != nullptr) patch["data"] = data_of(*values);
  return patch.dump();
}

}  // namespace orch::kube
