// The placement score's breakdown as text (score_breakdown.h). The formats are the ones the
// pipeline used to write into every verdict; `job explain` shows the same text as before.
#include "scheduler/model/score_breakdown.h"

#include <array>
#include <cstdio>
#include <utility>

#include "scheduler/model/ettr_text.h"

namespace orch {
namespace {

// 2.31 PFLOP/s, 989 TFLOP/s, 35 GFLOP/s: three figures in the largest unit that fits.
std::string flops_text(double flops) {
  static constexpr std::array<std::pair<double, const char*>, 4> units = {
      {{1e18, "EFLOP/s"}, {1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}}};
  for (const auto& [scale, unit] : units) {
    if (flops >= scale) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.3g %s", flops / scale, unit);
      return buf;
    }
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g FLOP/s", flops);
  return buf;
}

}  // namespace

std::string note_text(const ScoreNote& note) {
  switch (note.kind) {
    case ScoreNote::Kind::none:
      return {};
    case ScoreNote::Kind::peak_unknown:
      return "peak unknown for accelerator \"" + note.accelerator + "\"";
    case ScoreNote::Kind::goodput:
      break;
  }
  const double mtbf_h = note.node_mtbf_s / 3600;
  char buf[128];
  std::snprintf(buf, sizeof buf,
                mtbf_h >= 10 ? "mfu %.2f, ettr %s, node mtbf %.0f h, %s"
                             : "mfu %.2f, ettr %s, node mtbf %.2g h, %s",
                note.mfu, ettr_digits(note.ettr).c_str(), mtbf_h, flops_text(note.flops).c_str());
  std::string text = buf;
  if (note.staging_s > 0) {
    std::snprintf(buf, sizeof buf, ", moving here %.0f s (x%.3f)", note.staging_s,
                  note.staging_factor);
    text += buf;
  }
  return text;
}

std::string breakdown_text(const std::vector<ScorePart>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ' ';
    out += p.name;
    char buf[48];
    std::snprintf(buf, sizeof buf, "=%.3f", p.value);
    out += buf;
    const std::string why = note_text(p.note);
    if (!why.empty()) out += " (" + why + ")";
  }
  return out;
}

}  // namespace orch
