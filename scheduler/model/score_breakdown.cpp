// The placement score's breakdown as text (score_breakdown.h). The formats are the ones the
// pipeline used to write into every verdict; `job explain` shows the same text as before.
#include "scheduler/model/score_breakdown.h"

#include <array>
#include <cstdio>
#include <utility>

#include "scheduler/model/ettr_text.h"

namespace orch {
std::string flop_text(double flop, std::string_view suffix) {
  static constexpr std::array<std::pair<double, const char*>, 5> units = {
      {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {0, ""}}};
  for (const auto& [scale, prefix] : units) {
    if (flop >= scale || scale == 0) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.3g %sFLOP", scale > 0 ? flop / scale : flop, prefix);
      return std::string(buf).append(suffix);
    }
  }
  return {};
}

namespace {

// ", 2.10 USD/GPU-h, 61.9 PFLOP per USD" or ", no price (judged at 4.20 USD/GPU-h)".
std::string price_text(const ScoreNote& note) {
  char buf[96];
  if (note.priced == ScoreNote::Priced::assumed) {
    std::snprintf(buf, sizeof buf, ", no price (judged at %.2f %s/GPU-h)", note.price_per_gpu_hour,
                  note.currency.c_str());
    return buf;
  }
  std::snprintf(buf, sizeof buf, ", %.2f %s/GPU-h", note.price_per_gpu_hour, note.currency.c_str());
  std::string text = buf;
  if (note.flop_per_money > 0) {
    text += ", " + flop_text(note.flop_per_money, " per " + note.currency);
  }
  return text;
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
                note.mfu, ettr_digits(note.ettr).c_str(), mtbf_h, flop_text(note.flops).c_str());
  std::string text = buf;
  if (note.staging_s > 0) {
    std::snprintf(buf, sizeof buf, ", moving here %.0f s (x%.3f)", note.staging_s,
                  note.staging_factor);
    text += buf;
  }
  if (note.priced != ScoreNote::Priced::none) text += price_text(note);
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
