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
// there is data to stage); empty for a note of kind none.
std::string note_text(const ScoreNote& note);
// "goodput=4.920 (mfu 0.31, ...) move-worth=0.000 ...": each part with three decimals, and its
// note in parentheses when it has one.
std::string breakdown_text(const std::vector<ScorePart>& parts);

}  // namespace orch
