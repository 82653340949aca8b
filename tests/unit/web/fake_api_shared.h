#pragma once
// What the scripted fakes of the web tests (fake_jobs_api.h, fake_health_api.h,
// fake_data_api.h) share: the switches that make every call fail, the lock every call holds (the
// server calls from its own threads), which jobs exist and alpha's admission. Each fake derives
// from it virtually, so that FakeBackend, which is all three fakes, has one of each: one `fail`
// fails every route.

#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "scheduler/common/result.h"

namespace orch::testing {

class FakeApiShared {
 public:
  std::optional<Error> fail;      // forced on every call
  bool throw_everywhere = false;  // every call that looks at `fail` throws instead (guard tests)

  // alpha's admission: the jobs fake's list_clusters shows it, the health fake's start_burn_in
  // sets it to burn-in. Once burn_in_polls > 0, list_clusters reports it as burn-in that many
  // more times and then active (for `cluster burn-in --wait`).
  std::string alpha_admission = "active";
  int burn_in_polls = 0;

 protected:
  // The forced failure, if any; throws instead when throw_everywhere is set.
  std::optional<Error> failure() const {
    if (throw_everywhere) throw std::runtime_error("the backend threw");
    return fail;
  }
  // The forced failure, else not_found for a job other than 1 and 2.
  std::optional<Error> check(std::int64_t id) {
    if (auto e = failure()) return e;
    if (id != 1 && id != 2) {
      return make_error(ErrorKind::not_found, "no job with id " + std::to_string(id));
    }
    return std::nullopt;
  }

  std::mutex mu_;
};

}  // namespace orch::testing
