// `orchestrate job show ID --series` (series_command.h).
#include "cli/series_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "cli/client_call.h"

namespace orch {
namespace {

using nlohmann::json;

std::optional<double> number(const json& point, const char* key) {
  auto it = point.find(key);
  if (it == point.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::string printed(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// 12,345 with thousands separators (steps).
std::string count(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

// A figure as the view prints it.
enum class Figure { loss, tokens_per_s, mfu };

std::string shown(Figure f, double v) {
  if (f == Figure::mfu) return printed("%.1f%%", v * 100);
  if (f == Figure::loss) return printed("%.4g", v);
  if (v >= 1e6) return printed("%.2fM", v / 1e6);
  if (v >= 1e4) return printed("%.1fk", v / 1e3);
  return printed("%.0f", v);
}

const char* key_of(Figure f) {
  return f == Figure::loss ? "loss" : f == Figure::mfu ? "mfu" : "tokens_per_s";
}

// The attempt's points as `width` columns at most: each column the mean of the values of the
// points it covers (nullopt when none has one).
std::vector<std::optional<double>> columns(const json& points, Figure f, int width) {
  const std::size_t n = points.size();
  const std::size_t w = std::min(n, static_cast<std::size_t>(std::max(1, width)));
  std::vector<std::optional<double>> out;
  for (std::size_t c = 0; c < w; ++c) {
    double sum = 0;
    int k = 0;
    for (std::size_t i = c * n / w; i < (c + 1) * n / w; ++i) {
      if (auto v = number(points[i], key_of(f))) {
        sum += *v;
        ++k;
      }
    }
    out.push_back(k > 0 ? std::optional<double>(sum / k) : std::nullopt);
  }
  return out;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
};

// One line: "  loss    ▇▅▃▂▁  min 2.01  last 2.1" (and the highest loss with its step when a
// step's spike reached above every column's mean).
void figure_line(const json& points, Figure f, const Range& range, int width, std::ostream& out) {
  static const char* const kNames[] = {"loss", "tokens/s", "MFU"};
  const auto cols = columns(points, f, width);
  std::optional<double> lowest, last;
  for (const json& p : points) {
    const auto v = number(p, key_of(f));
    if (!v) continue;
    const auto low = f == Figure::loss ? number(p, "loss_min").value_or(*v) : *v;
    lowest = lowest ? std::min(*lowest, low) : low;
    last = v;
  }
  std::string line = std::string("  ") + kNames[static_cast<int>(f)];
  line.resize(14, ' ');
  if (!last) {
    out << line << "(not reported)\n";
    return;
  }
  out << line << sparkline(cols, range.lo, range.hi) << "  min " << shown(f, *lowest) << "  last "
      << shown(f, *last);
  if (f == Figure::loss) {
    std::optional<double> highest;
    const json* at = nullptr;
    for (const json& p : points) {
      const auto v = number(p, "loss_max");
      if (v && (!highest || *v > *highest)) {
        highest = v;
        at = &p;
      }
    }
    if (highest && *highest > range.hi) {
      // A merged point knows its steps, not which one of them spiked.
      const std::int64_t first = at->value("first_step", std::int64_t{0});
      const std::int64_t last_step = at->value("last_step", std::int64_t{0});
      out << "  max " << shown(f, *highest)
          << (first == last_step ? " (step " + count(first)
                                 : " (steps " + count(first) + ".." + count(last_step))
          << ")";
    }
  }
  out << "\n";
}

}  // namespace

std::string sparkline(const std::vector<std::optional<double>>& values, double lo, double hi) {
  static const char* const kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::string out;
  for (const auto& v : values) {
    if (!v) {
      out += ' ';
      continue;
    }
    int level = 3;
    if (hi > lo) {
      level = static_cast<int>(std::floor((*v - lo) / (hi - lo) * 8));
      level = std::clamp(level, 0, 7);
    }
    out += kBars[level];
  }
  return out;
}

void render_series(const json& series, std::ostream& out, int width) {
  const json attempts = series.value("attempts", json::array());
  // One scale per figure over every attempt's columns.
  Range ranges[3];
  std::size_t points = 0;
  for (const json& a : attempts) {
    const json& p = a.contains("points") ? a["points"] : json::array();
    points += p.size();
    for (Figure f : {Figure::loss, Figure::tokens_per_s, Figure::mfu}) {
      for (const auto& v : columns(p, f, width)) {
        if (!v) continue;
        Range& r = ranges[static_cast<int>(f)];
        r.lo = std::min(r.lo, *v);
        r.hi = std::max(r.hi, *v);
      }
    }
  }
  // A flat figure stays flat: rounding in work over time must not draw noise.
  for (Range& r : ranges) {
    if (r.hi - r.lo <= 1e-9 * std::max(std::fabs(r.lo), std::fabs(r.hi))) r.lo = r.hi;
  }
  out << "job " << series.value("job_id", std::int64_t{0}) << ": " << attempts.size()
      << (attempts.size() == 1 ? " attempt, " : " attempts, ") << points << " points\n";
  for (const json& a : attempts) {
    const json& p = a.contains("points") ? a["points"] : json::array();
    out << "attempt " << a.value("attempt", 0) << " on " << a.value("cluster", std::string());
    if (p.empty()) {
      out << ": no progress reported\n";
      continue;
    }
    out << ": steps " << count(p.front().value("first_step", std::int64_t{0})) << ".."
        << count(p.back().value("last_step", std::int64_t{0}));
    if (a.contains("resumed_from_step") && a["resumed_from_step"].is_number_integer()) {
      out << " (resumed from " << count(a["resumed_from_step"].get<std::int64_t>()) << ")";
    }
    out << "\n";
    for (Figure f : {Figure::loss, Figure::tokens_per_s, Figure::mfu}) {
      figure_line(p, f, ranges[static_cast<int>(f)], width, out);
    }
    if (const std::string flag = a.value("mfu_flag", std::string()); !flag.empty()) {
      out << "  MFU flagged: " << flag << "\n";
    }
  }
  const json checkpoints = series.value("checkpoints", json::array());
  if (!checkpoints.empty()) {
    const json& last = checkpoints.back();
    out << "checkpoints: " << checkpoints.size() << ", latest at step "
        << count(last.value("step", std::int64_t{0})) << " (attempt " << last.value("attempt", 0)
        << ")\n";
  }
}

int run_job_series(const ClientOptions& o, std::int64_t id, std::ostream& out, std::ostream& err) {
  json body;
  const std::string path = "/api/v1/jobs/" + std::to_string(id) + "/series";
  if (int rc = call_json(o, "GET", path, body, err); rc != kExitOk) return rc;
  as_json(o) ? print_json(body, out) : render_series(body, out);
  return kExitOk;
}

}  // namespace orch
