#pragma once
// Time comes from a Clock so that the brain runs the same under a fake clock (tests, the
// simulator) and the system clock (the server). Times are milliseconds since the Unix epoch:
// plain integers store directly in SQLite and compare without conversions.

#include <cstdint>

namespace orch {

using Millis = std::int64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Millis now_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  Millis now_ms() const override;
};

// A clock that only moves when told to. Used by tests and the simulator.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(Millis start = 1'700'000'000'000) : now_(start) {}
  Millis now_ms() const override { return now_; }
  void advance_ms(Millis delta) { now_ += delta; }
  void set_ms(Millis t) { now_ = t; }

 private:
  Millis now_;
};

}  // namespace orch
