#pragma once
// Small pieces of the Kubernetes API's JSON conventions shared by the fake's parts: API errors
// as Status objects, timestamps, uids and generated names, and field access helpers.

#include <chrono>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace orch::fake_kube {

using nlohmann::json;

// An API error: the HTTP code, the Status reason ("NotFound", "AlreadyExists", "Invalid",
// "BadRequest", "Gone", "Expired", "MethodNotAllowed", "Unauthorized") and the message.
// Route handlers throw it; the router turns it into a Status body.
struct ApiError : std::runtime_error {
  ApiError(int code_, std::string reason_, const std::string& message)
      : std::runtime_error(message), code(code_), reason(std::move(reason_)) {}
  int code;
  std::string reason;
  json details = nullptr;  // {"name":..,"group":..,"kind":..} when known
};

// {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",...} as the real server
// writes it.
json status_failure(int code, const std::string& reason, const std::string& message,
                    const json& details = nullptr);
json status_failure(const ApiError& error);
// {"kind":"Status",...,"status":"Success","details":{...}} (the answer to some deletions).
json status_success(const json& details);

// RFC 3339 in UTC with seconds, as Kubernetes writes metav1.Time: "2025-01-02T03:04:05Z".
std::string rfc3339(std::chrono::system_clock::time_point t);
std::string now_rfc3339();
// Parses what rfc3339() writes; nullopt-like epoch (time_point{}) when malformed.
std::chrono::system_clock::time_point parse_rfc3339(const std::string& text);

// A random version 4 UUID.
std::string new_uid();
// Five characters from Kubernetes' generateName alphabet ("bcdfghjklmnpqrstvwxz2456789").
std::string random_suffix();
// 64 hex digits, for containerID "containerd://...".
std::string random_hex(int digits);

// obj[a][b]... or `fallback` when a step is missing or not an object.
const json& at_path(const json& obj, std::initializer_list<const char*> path);
std::string string_at(const json& obj, std::initializer_list<const char*> path,
                      const std::string& fallback = "");
long long int_at(const json& obj, std::initializer_list<const char*> path, long long fallback);

// The GPUs a pod asks for: the sum over its containers of resources.limits (or, when absent,
// requests) "nvidia.com/gpu".
long long pod_gpus(const json& pod);
// Parses a Kubernetes quantity of whole units ("8", "8000m" -> 8); -1 when it is not one.
long long parse_count(const json& quantity);

inline constexpr const char* kGpuResource = "nvidia.com/gpu";

}  // namespace orch::fake_kube
