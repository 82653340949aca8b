#pragma once
// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for
// (Accept: application/json;as=Table;v=v1;g=meta.k8s.io), with the columns the real server
// prints for nodes, pods, jobs, services, secrets and namespaces.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

// include_object: "None", "Metadata" (the default) or "Object".
nlohmann::json to_table(const std::string& resource, const std::vector<nlohmann::json>& objects,
                        const std::string& resource_version, const std::string& include_object);

bool wants_table(const std::string& accept);

// kubectl's HumanDuration: "45s", "3m20s", "5h", "12d".
std::string human_duration(long long seconds);

}  // namespace orch::fake_kube
