#include "testkit/fake_kube/kube_json.h"

#include <cstdio>
#include <ctime>
#include <mutex>
#include <random>

namespace orch::fake_kube {
namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine;
}
std::mutex rng_mutex;

json status_base(const char* status, int code) {
  return json{{"kind", "Status"},
              {"apiVersion", "v1"},
              {"metadata", json::object()},
              {"status", status},
              {"code", code}};
}

}  // namespace

json status_failure(int code, const std::string& reason, const std::string& message,
                    const json& details) {
  json out = status_base("Failure", code);
  out["message"] = message;
  out["reason"] = reason;
  if (!details.is_null()) out["details"] = details;
  return out;
}

json status_failure(const ApiError& error) {
  return status_failure(error.code, error.reason, error.what(), error.details);
}

json status_success(const json& details) {
  json out = status_base("Success", 200);
  out["details"] = details;
  return out;
}

std::string rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string now_rfc3339() {
  return rfc3339(std::chrono::system_clock::now());
}

std::chrono::system_clock::time_point parse_rfc3339(const std::string& text) {
  std::tm tm{};
  if (text.size() < 20 || !strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string new_uid() {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  {
    std::lock_guard lock(rng_mutex);
    a = rng()();
    b = rng()();
  }
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  char buf[40];
  std::snprintf(
      buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx",
      static_cast<unsigned long long>(a >> 32), static_cast<unsigned long long>((a >> 16) & 0xffff),
      static_cast<unsigned long long>(a & 0xffff), static_cast<unsigned long long>(b >> 48),
      static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

std::string random_suffix() {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  std::lock_guard lock(rng_mutex);
  for (int i = 0; i < 5; ++i) out += kAlphabet[rng()() % (sizeof kAlphabet - 1)];
  return out;
}

std::string random_hex(int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::lock_guard lock(rng_mutex);
  for (int i = 0; i < digits; ++i) out += kHex[rng()() % 16];
  return out;
}

const json& at_path(const json& obj, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* cur = &obj;
  for (const char* step : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(step);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

std::string string_at(const json& obj, std::initializer_list<const char*> path,
                      const std::string& fallback) {
  const json& v = at_path(obj, path);
  return v.is_string() ? v.get<std::string>() : fallback;
}

long long int_at(const json& obj, std::initializer_list<const char*> path, long long fallback) {
  const json& v = at_path(obj, path);
  return v.is_number_integer() ? v.get<long long>() : fallback;
}

long long parse_count(const json& quantity) {
  if (quantity.is_number_integer()) return quantity.get<long long>();
  if (!quantity.is_string()) return -1;
  std::string text = quantity.get<std::string>();
  long long divisor = 1;
  if (!text.empty() && text.back() == 'm') {
    text.pop_back();
    divisor = 1000;
  }
  if (text.empty() || text.size() > 15) return -1;
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value / divisor;
}

long long pod_gpus(const json& pod) {
  long long total = 0;
  const json& containers = at_path(pod, {"spec", "containers"});
  if (!containers.is_array()) return 0;
  for (const json& c : containers) {
    const json& limit = at_path(c, {"resources", "limits", kGpuResource});
    const json& request = at_path(c, {"resources", "requests", kGpuResource});
    const long long n = parse_count(limit.is_null() ? request : limit);
    if (n > 0) total += n;
  }
  return total;
}

}  // namespace orch::fake_kube
