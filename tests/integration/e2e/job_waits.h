#pragma once
// What every end-to-end test does with a job over REST: submit a spec, read the job, its
// attempts and events, and wait (polling) until a condition holds. Shared by the local-site and
// the Slurm end-to-end fixtures.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/integration/e2e/server_process.h"

namespace orch::e2e {

inline bool is_final(const nlohmann::json& job) {
  const std::string s = job.value("state", "");
  return s == "succeeded" || s == "failed" || s == "cancelled";
}

// POSTs a YAML spec; returns the new id, or 0 (after a test failure) when it was refused.
inline std::int64_t submit_job(const std::string& url, const std::string& yaml) {
  HttpResponse r = call(url, "POST", "/api/v1/jobs", yaml, "application/yaml");
  EXPECT_EQ(r.status, 201) << r.body << "\nspec:\n" << yaml;
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (r.status != 201 || !j.is_object() || !j["id"].is_number_integer()) return 0;
  return j["id"].get<std::int64_t>();
}

inline nlohmann::json job_json(const std::string& url, std::int64_t id) {
  return get_json(url, "/api/v1/jobs/" + std::to_string(id));
}

// The job's attempts (or events): an array, empty when the call failed.
inline nlohmann::json job_list(const std::string& url, std::int64_t id, const std::string& what) {
  nlohmann::json a = get_json(url, "/api/v1/jobs/" + std::to_string(id) + "/" + what);
  return a.is_object() ? a[what] : nlohmann::json::array();
}

// Polls the job every `poll` until done(job) holds; on timeout fails the test with the job,
// its attempts and events, and returns null.
inline nlohmann::json wait_for_job(const std::string& url, std::int64_t id,
                                   const std::function<bool(const nlohmann::json&)>& done,
                                   const std::string& what, milliseconds timeout,
                                   milliseconds poll = milliseconds(50)) {
  const auto deadline = SteadyClock::now() + timeout;
  while (SteadyClock::now() < deadline) {
    nlohmann::json j = job_json(url, id);
    if (j.is_object() && done(j)) return j;
    std::this_thread::sleep_for(poll);
  }
  ADD_FAILURE() << "timed out after " << timeout.count() << " ms waiting for job " << id << " to "
                << what << describe_job(url, id);
  return nullptr;
}

}  // namespace orch::e2e
