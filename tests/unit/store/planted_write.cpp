// Compiled by ctest, never linked (tests/unit/store/CMakeLists.txt): a StoreReader offers no
// write. Built as it is, this file must compile (the reads are there); built with
// -DPLANTED_WRITE, the compiler must refuse the write through the reader.
#include "scheduler/store/store_reader.h"

namespace orch {

Result<void> planted(StoreReader& reader) {
#ifdef PLANTED_WRITE
  return reader.add_event(std::nullopt, std::nullopt, 0, "planted", "a write through a reader");
#else
  auto jobs = reader.jobs(std::nullopt, 1);
  if (!jobs) return jobs.error();
  return Ok{};
#endif
}

}  // namespace orch
