#pragma once
// A cluster's `live_watch:` map (issue 43; docs/config.md): {watch_s: 2, kernel_log: PATH,
// nvidia_smi: PATH|none, gpu_sample_s: 30, fault_action: record|stop}. Checked as the rest of
// the clusters file is (file:line:col); absent keys keep the defaults of LiveWatchSpec.

#include "scheduler/model/live_watch_spec.h"
#include "scheduler/spec/yaml_reader.h"

namespace orch {

// entry: one cluster's map.
void read_live_watch(const yaml::MapView& entry, LiveWatchSpec& out);

}  // namespace orch
