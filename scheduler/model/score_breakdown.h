#pragma once
// What a feasible cluster's placement score is made of, kept as numbers (issue 18's performance
// goal). Every decision gives every cluster a verdict, and formatting each feasible cluster's
// breakdown cost more than deciding; so the pipeline keeps the numbers, the store keeps the
// numbers, and the text that `orchestrate job explain` and the REST API show is made from them
// only when a verdict is read:
//   goodput=4.920 (mfu 0.31, ettr 0.93, node mtbf 120 h, 2.31 PFLOP/s) move-worth=0.000 ...

#include <string>
#include <string_view>
#include <vector>

namespace orch {

// What a score says it is made of (ScorePlugin::note); none for scores that explain themselves.
struct ScoreNote {
  enum class Kind { none, goodput, peak_unknown };
  Kind kind = Kind::none;
  // goodput: the expected MFU and ETTR, the node MTBF, the expected useful FLOP/s, and the time
  // to move the job there (copying its data and checkpoint) with the factor it costs over the
  // rest of its run (staging_s 0: nothing to copy).
  double mfu = 0;
  double ettr = 0;
  double node_mtbf_s = 0;
  double flops = 0;
  double staging_s = 0;
  double staging_factor = 1;
  // goodput, issue 45: the price of a GPU-hour there (none: the fleet has no prices; own: the
  // cluster's; assumed: it has none and was judged at the dearest priced cluster's), its
  // currency, the useful FLOP a unit of money buys there (flops x 3600 / (GPUs x price); 0
  // without a price of its own or at a price of 0), and whether placement ranked by that
  // (the goodput_per_cost objective) rather than by the FLOP/s.
  enum class Priced { none, own, assumed };
  Priced priced = Priced::none;
  double price_per_gpu_hour = 0;
  std::string currency;
  double flop_per_money = 0;
  bool per_cost = false;
  // peak_unknown: the cluster's accelerator, which the peak table lacks (rare: a copy is fine).
  std::string accelerator;
};

// One score's weighted part of a cluster's total.
struct ScorePart {
  // The plugin's name: a literal of the plugin (placing), or the stored row's text while the
  // row is read back; either outlives the part.
  std::string_view name;
  double value = 0;
  ScoreNote note;
};

// "mfu 0.31, ettr 0.93, node mtbf 120 h, 2.31 PFLOP/s" (", moving here 600 s (x0.993)" when
// there is data to stage; ", 2.10 USD/GPU-h, 61.9 PFLOP per USD" where the fleet has prices,
// or ", no price (judged at 4.20 USD/GPU-h)"); empty for a note of kind none.
std::string note_text(const ScoreNote& note);
// "goodput=4.920 (mfu 0.31, ...) move-worth=0.000 ...": each part with three decimals, and its
// note in parentheses when it has one.
std::string breakdown_text(const std::vector<ScorePart>& parts);
// 2.31 PFLOP/s, 989 TFLOP/s: three figures in the largest unit that fits, then the unit ("FLOP"
// and the suffix: "/s", " per USD").
std::string flop_text(double flop, std::string_view suffix = "/s");

}  // namespace orch
