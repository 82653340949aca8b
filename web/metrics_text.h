#pragma once
// The Prometheus text exposition format (version 0.0.4) of a MetricsSnapshot: one family per
// figure with its HELP and TYPE, label values escaped, names prefixed orchestrate_.

#include <string>

#include "web/metrics_api.h"

namespace orch {

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string metrics_text(const MetricsSnapshot& snapshot);

// A label value as the format wants it: backslash, double quote and newline escaped.
std::string escape_label_value(const std::string& value);

}  // namespace orch
