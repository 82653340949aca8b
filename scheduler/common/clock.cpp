#include "scheduler/common/clock.h"

#include <chrono>

namespace orch {

Millis SystemClock::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace orch
