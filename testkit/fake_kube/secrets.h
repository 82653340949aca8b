#pragma once
// v1 Secrets, as the API server stores them and the kubelet reads them: admission on create and
// after a patch (type defaults to Opaque; stringData is folded into data, base64, and dropped;
// every data value must be base64; keys must be config keys), and the value a container's
// valueFrom.secretKeyRef names, or the kubelet's message when it cannot be had (the pod then
// waits in CreateContainerConfigError until it can).

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

// Checks and defaults a Secret; throws ApiError 400 (a data value that is not base64, with the
// real decoder's wording) or 422 (a key that is not [-._a-zA-Z0-9]+).
void admit_secret(nlohmann::json& secret);

// What a secretKeyRef resolves to: the decoded value, or the kubelet's reason why not
// ("secret \"NAME\" not found", "couldn't find key KEY in Secret NS/NAME"). An optional
// reference (`optional: true`) to what is missing gives neither: the variable is left out.
struct SecretKeyValue {
  std::optional<std::string> value;
  std::string error;
};

// `secret`: the Secret the reference names in the pod's namespace, nullopt when there is none.
SecretKeyValue secret_key_value(const std::optional<nlohmann::json>& secret,
                                const nlohmann::json& secret_key_ref, const std::string& ns);

}  // namespace orch::fake_kube
