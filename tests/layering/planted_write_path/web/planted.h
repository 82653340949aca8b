#pragma once
// Planted: a REST handler holding the writer, which scheduler/store/README.md forbids.

#include "scheduler/store/store_reader.h"

namespace orch {
class Store;
void planted(Store& store);
}  // namespace orch
