// Store: placement verdicts, one row per job (migration 19) holding every cluster's verdict.
//
// A decision over a hundred clusters writes a hundred verdicts, and most are never read, so the
// row is written by hand, as numbers: a feasible cluster's score breakdown is each part's value
// and its note's figures (scheduler/model/score_breakdown.h), made text only by verdicts_of.
//   {"scores": ["goodput", "same-site", ...],
//    "notes": [["goodput", mfu, ettr, node_mtbf_s, flops, staging_s, factor], ...],
//    (issue 45: where the fleet has prices or the objective is goodput_per_cost, a goodput note
//    goes on with priced (0 none, 1 own, 2 assumed), price_per_gpu_hour, flop_per_money,
//    currency, per_cost (0 | 1))
//    "verdicts": [{"cluster": "a", "feasible": 0, "reason": "admission: ..."},
//                 {"cluster": "b", "feasible": 1, "score": 9.5, "chosen": 1,
//                  "parts": [[6, 0], 0, 4, 0, 0.98]},
//                 {"cluster": "c", "reason": 0, "also": [1],
//                  "preemptions": [[2, "sweep-1", "vision", 4, 0, 2]], "preemptions_more": 0}],
//    "reasons": ["admission: cluster is not delivered yet", "capacity: ...",
//                "team vision within its quota 4/4, protected"]}
// A part is its value alone, or [value, its note's index in "notes"]: clusters alike (the same
// accelerator, the same history or none) share one note instead of repeating it a hundred times.
// Likewise a reason is its index in "reasons" (a fleet's undelivered or down clusters say the
// same), and a verdict without "feasible" is not feasible. "also" (issue 42) are the reasons of the
// filters that refused it after the first; "preemptions" what the decision considered there:
// [job, job name, team, GPUs, taken, why (an index in "reasons")].
// Rows written before this form (an array of verdicts, each with its text in "reason") read back
// as they always did.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "scheduler/model/json_text.h"
#include "scheduler/store/sqlite_db.h"
#include "scheduler/store/store.h"

namespace orch {
namespace {

constexpr std::string_view kGoodputNote = "goodput";
constexpr std::string_view kPeakUnknownNote = "peak_unknown";

// Appends s as a JSON string. Printable ASCII (cluster and score names, most reasons) is copied
// as is; anything else goes through nlohmann, which escapes it and replaces invalid UTF-8 the
// way every other stored text is.
void put_string(std::string& out, std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (!plain) {
    out += json_text(nlohmann::json(std::string(s)));
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

// Appends x in the shortest form that reads back as the same double, so the text made when it is
// read is the text it would have made now. JSON has no infinity (staging with no bandwidth takes
// forever), so one that is not finite is written as strtod's text ("inf", "nan").
void put_number(std::string& out, double x) {
  char buf[32];
  if (!std::isfinite(x)) {
    out += std::isnan(x) ? "\"nan\"" : x > 0 ? "\"inf\"" : "\"-inf\"";
    return;
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, ec == std::errc() ? end : buf);
}

double read_number(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return std::strtod(v.get_ref<const std::string&>().c_str(), nullptr);
  return 0;
}

void put_names(std::string& out, const std::vector<ScorePart>& parts) {
  out += '[';
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += ',';
    put_string(out, parts[i].name);
  }
  out += ']';
}

bool same_names(const std::vector<ScorePart>& a, const std::vector<ScorePart>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const ScorePart& x, const ScorePart& y) { return x.name == y.name; });
}

void put_int(std::string& out, std::int64_t x) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

void put_note(std::string& out, const ScoreNote& n) {
  out += '[';
  if (n.kind == ScoreNote::Kind::peak_unknown) {
    put_string(out, kPeakUnknownNote);
    out += ',';
    put_string(out, n.accelerator);
  } else {
    put_string(out, kGoodputNote);
    for (double x : {n.mfu, n.ettr, n.node_mtbf_s, n.flops, n.staging_s, n.staging_factor}) {
      out += ',';
      put_number(out, x);
    }
    if (n.priced != ScoreNote::Priced::none || n.per_cost) {
      out += ',';
      put_int(out, static_cast<int>(n.priced));
      for (double x : {n.price_per_gpu_hour, n.flop_per_money}) {
        out += ',';
        put_number(out, x);
      }
      out += ',';
      put_string(out, n.currency);
      out += n.per_cost ? ",1" : ",0";
    }
  }
  out += ']';
}

// The distinct notes of one decision, each with its index in the row's "notes".
class NoteTable {
 public:
  int index_of(const ScoreNote& n) {
    // NaN compares with nothing, so it has no place in the map's order: such a note stands alone.
    for (double x : {n.mfu, n.ettr, n.node_mtbf_s, n.flops, n.staging_s, n.staging_factor,
                     n.price_per_gpu_hour, n.flop_per_money}) {
      if (std::isnan(x)) {
        notes_.push_back(&n);
        return static_cast<int>(notes_.size()) - 1;
      }
    }
    auto key =
        std::tuple(n.kind, n.mfu, n.ettr, n.node_mtbf_s, n.flops, n.staging_s, n.staging_factor,
                   std::string_view(n.accelerator), n.priced, n.price_per_gpu_hour,
                   n.flop_per_money, std::string_view(n.currency), n.per_cost);
    auto [it, added] = index_.try_emplace(key, static_cast<int>(notes_.size()));
    if (added) notes_.push_back(&n);
    return it->second;
  }
  const std::vector<const ScoreNote*>& notes() const { return notes_; }

 private:
  using Key =
      std::tuple<ScoreNote::Kind, double, double, double, double, double, double, std::string_view,
                 ScoreNote::Priced, double, double, std::string_view, bool>;
  std::map<Key, int> index_;
  std::vector<const ScoreNote*> notes_;
};

void put_part(std::string& out, const ScorePart& p, NoteTable& notes) {
  if (p.note.kind == ScoreNote::Kind::none) {
    put_number(out, p.value);
    return;
  }
  out += '[';
  put_number(out, p.value);
  out += ',';
  char buf[16];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, notes.index_of(p.note)).ptr);
  out += ']';
}

// The distinct reasons of one decision, each with its index in the row's "reasons".
class ReasonTable {
 public:
  int index_of(const std::string& reason) {
    // Clusters alike come in runs (the file's order): most reasons are the last one again.
    if (last_ >= 0 && *reasons_[last_] == reason) return last_;
    auto [it, added] = index_.try_emplace(reason, static_cast<int>(reasons_.size()));
    if (added) reasons_.push_back(&reason);
    last_ = it->second;
    return last_;
  }
  const std::vector<const std::string*>& reasons() const { return reasons_; }

 private:
  std::unordered_map<std::string_view, int> index_;
  std::vector<const std::string*> reasons_;
  int last_ = -1;
};

// A verdict's further refusals and the preemptions considered on its cluster (issue 42).
void put_explanation(std::string& out, const PlacementVerdictRow& v, ReasonTable& reasons) {
  if (v.refused_by.size() > 1) {
    out += ",\"also\":[";
    for (std::size_t i = 1; i < v.refused_by.size(); ++i) {
      if (i > 1) out += ',';
      put_int(out, reasons.index_of(v.refused_by[i]));
    }
    out += ']';
  }
  if (v.preemptions.empty()) return;
  out += ",\"preemptions\":[";
  for (std::size_t i = 0; i < v.preemptions.size(); ++i) {
    const PreemptionNote& n = v.preemptions[i];
    out += i ? ",[" : "[";
    put_int(out, n.victim.job);
    out += ',';
    put_string(out, n.victim.job_name);
    out += ',';
    put_string(out, n.victim.team);
    out += ',';
    put_int(out, n.victim.gpus);
    out += n.taken ? ",1," : ",0,";
    put_int(out, reasons.index_of(n.why));
    out += ']';
  }
  out += ']';
  if (v.preemptions_more > 0) {
    out += ",\"preemptions_more\":";
    put_int(out, v.preemptions_more);
  }
}

std::string verdicts_text(const std::vector<PlacementVerdictRow>& rows) {
  // The score names once: every feasible verdict of one decision has the same parts.
  const PlacementVerdictRow* first = nullptr;
  for (const auto& v : rows) {
    if (!v.parts.empty()) {
      first = &v;
      break;
    }
  }
  NoteTable notes;
  ReasonTable reasons;
  std::string out;
  out.reserve(64 + rows.size() * 100);
  out += "{\"scores\":";
  put_names(out, first ? first->parts : std::vector<ScorePart>{});
  out += ",\"verdicts\":[";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const PlacementVerdictRow& v = rows[i];
    out += i ? ",{\"cluster\":" : "{\"cluster\":";
    put_string(out, v.cluster);
    if (v.feasible) out += ",\"feasible\":1";
    if (!v.reason.empty()) {
      out += ",\"reason\":";
      char buf[16];
      out.append(buf, std::to_chars(buf, buf + sizeof buf, reasons.index_of(v.reason)).ptr);
    }
    if (v.score) {
      out += ",\"score\":";
      put_number(out, *v.score);
    }
    if (v.chosen) out += ",\"chosen\":1";
    if (!v.parts.empty()) {
      if (!same_names(v.parts, first->parts)) {
        out += ",\"scores\":";
        put_names(out, v.parts);
      }
      out += ",\"parts\":[";
      for (std::size_t p = 0; p < v.parts.size(); ++p) {
        if (p) out += ',';
        put_part(out, v.parts[p], notes);
      }
      out += ']';
    }
    put_explanation(out, v, reasons);
    out += '}';
  }
  out += "],\"notes\":[";
  for (std::size_t i = 0; i < notes.notes().size(); ++i) {
    if (i) out += ',';
    put_note(out, *notes.notes()[i]);
  }
  out += "],\"reasons\":[";
  for (std::size_t i = 0; i < reasons.reasons().size(); ++i) {
    if (i) out += ',';
    put_string(out, *reasons.reasons()[i]);
  }
  out += "]}";
  return out;
}

// A goodput note's price (issue 45), when it has one.
void read_price(const nlohmann::json& n, ScoreNote& note) {
  if (n.size() < 12 || !n[7].is_number_integer() || !n[10].is_string()) return;
  const int priced = n[7].get<int>();
  if (priced < 0 || priced > static_cast<int>(ScoreNote::Priced::assumed)) return;
  note.priced = static_cast<ScoreNote::Priced>(priced);
  note.price_per_gpu_hour = read_number(n[8]);
  note.flop_per_money = read_number(n[9]);
  note.currency = n[10].get<std::string>();
  note.per_cost = n[11].is_number() && n[11].get<int>() != 0;
}

ScoreNote read_note(const nlohmann::json& n) {
  ScoreNote note;
  if (!n.is_array() || n.empty() || !n[0].is_string()) return note;
  const std::string& kind = n[0].get_ref<const std::string&>();
  if (kind == kPeakUnknownNote && n.size() > 1 && n[1].is_string()) {
    note.kind = ScoreNote::Kind::peak_unknown;
    note.accelerator = n[1].get<std::string>();
  } else if (kind == kGoodputNote && n.size() >= 7) {
    note.kind = ScoreNote::Kind::goodput;
    note.mfu = read_number(n[1]);
    note.ettr = read_number(n[2]);
    note.node_mtbf_s = read_number(n[3]);
    note.flops = read_number(n[4]);
    note.staging_s = read_number(n[5]);
    note.staging_factor = read_number(n[6]);
    read_price(n, note);
  }
  return note;
}

// A stored verdict's breakdown as text, from its parts, the names they go by and the row's notes;
// and the goodput part's note into the row (issue 45: job explain's figures per cluster).
std::string breakdown_of(const nlohmann::json& parts, const nlohmann::json& names,
                         const std::vector<ScoreNote>& notes, PlacementVerdictRow& row) {
  std::vector<ScorePart> out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const nlohmann::json& p = parts[i];
    ScorePart part;
    if (names.is_array() && i < names.size() && names[i].is_string()) {
      part.name = names[i].get_ref<const std::string&>();
    }
    if (!p.is_array()) {
      part.value = read_number(p);
    } else {
      part.value = p.empty() ? 0 : read_number(p[0]);
      if (p.size() > 1 && p[1].is_number_unsigned() && p[1].get<std::size_t>() < notes.size()) {
        part.note = notes[p[1].get<std::size_t>()];
      }
    }
    if (part.note.kind == ScoreNote::Kind::goodput) row.goodput = part.note;
    out.push_back(std::move(part));
  }
  return breakdown_text(out);
}

// The text a stored reason stands for: itself (rows before the reasons table) or its index.
std::string reason_at(const nlohmann::json& r, const nlohmann::json& reasons) {
  if (r.is_string()) return r.get<std::string>();
  if (r.is_number_unsigned() && r.get<std::size_t>() < reasons.size() &&
      reasons[r.get<std::size_t>()].is_string()) {
    return reasons[r.get<std::size_t>()].get<std::string>();
  }
  return {};
}

// A stored verdict's refusals after the first and the preemptions considered (issue 42).
void read_explanation(const nlohmann::json& v, const nlohmann::json& reasons,
                      PlacementVerdictRow& r) {
  if (!r.feasible && !r.reason.empty()) r.refused_by.push_back(r.reason);
  if (auto also = v.find("also"); also != v.end() && also->is_array()) {
    for (const auto& a : *also) r.refused_by.push_back(reason_at(a, reasons));
  }
  if (auto list = v.find("preemptions"); list != v.end() && list->is_array()) {
    for (const auto& p : *list) {
      if (!p.is_array() || p.size() < 6) continue;
      PreemptionNote n;
      n.victim.job = p[0].is_number_integer() ? p[0].get<std::int64_t>() : 0;
      n.victim.job_name = p[1].is_string() ? p[1].get<std::string>() : "";
      n.victim.team = p[2].is_string() ? p[2].get<std::string>() : "";
      n.victim.gpus = p[3].is_number_integer() ? p[3].get<int>() : 0;
      n.victim.cluster = r.cluster;
      n.taken = p[4].is_number() && p[4].get<int>() != 0;
      n.why = reason_at(p[5], reasons);
      r.preemptions.push_back(std::move(n));
    }
  }
  if (auto more = v.find("preemptions_more"); more != v.end() && more->is_number_integer()) {
    r.preemptions_more = more->get<int>();
  }
}

}  // namespace

Result<void> Store::replace_verdicts(JobId job, const std::vector<PlacementVerdictRow>& rows) {
  // One row per job: a decision over a hundred clusters is one write, not a hundred.
  if (rows.empty()) return execute(db_, "DELETE FROM placement_explain WHERE job_id = ?", job);
  Millis at = 0;
  for (const auto& v : rows) at = std::max(at, v.at_ms);
  return execute(db_,
                 "INSERT INTO placement_explain(job_id, at_ms, verdicts) VALUES (?, ?, ?) "
                 "ON CONFLICT(job_id) DO UPDATE SET at_ms = excluded.at_ms, "
                 "verdicts = excluded.verdicts",
                 job, at, verdicts_text(rows));
}

Result<std::vector<PlacementVerdictRow>> StoreReader::verdicts_of(JobId job) {
  auto row = query_one(
      db_, "SELECT at_ms, verdicts FROM placement_explain WHERE job_id = ?",
      [](const Stmt& s) { return std::pair<Millis, std::string>(s.col_int(0), s.col_text(1)); },
      job);
  if (!row) return row.error();
  std::vector<PlacementVerdictRow> out;
  if (!*row) return out;
  const auto stored = nlohmann::json::parse((*row)->second, nullptr, false);
  // This form: an object with the score names; before it, the array of verdicts alone.
  const nlohmann::json* list = &stored;
  const nlohmann::json none;
  const nlohmann::json* names = &none;
  std::vector<ScoreNote> notes;
  const nlohmann::json* reasons = &none;
  if (stored.is_object()) {
    auto it = stored.find("verdicts");
    if (it == stored.end()) return out;
    list = &*it;
    if (auto n = stored.find("scores"); n != stored.end()) names = &*n;
    if (auto n = stored.find("notes"); n != stored.end() && n->is_array()) {
      for (const auto& note : *n) notes.push_back(read_note(note));
    }
    if (auto n = stored.find("reasons"); n != stored.end() && n->is_array()) reasons = &*n;
  }
  if (!list->is_array()) return out;  // unreadable: as if never evaluated
  for (const auto& v : *list) {
    if (!v.is_object()) continue;
    PlacementVerdictRow r;
    r.job_id = job;
    r.cluster = v.value("cluster", "");
    r.feasible = v.value("feasible", 0) != 0;
    if (auto it = v.find("reason"); it != v.end()) r.reason = reason_at(*it, *reasons);
    read_explanation(v, *reasons, r);
    if (auto it = v.find("score"); it != v.end() && (it->is_number() || it->is_string())) {
      r.score = read_number(*it);
    }
    r.chosen = v.value("chosen", 0) != 0;
    if (auto parts = v.find("parts"); parts != v.end() && parts->is_array()) {
      auto own = v.find("scores");
      r.reason = breakdown_of(*parts, own != v.end() ? *own : *names, notes, r);
    }
    r.at_ms = (*row)->first;
    out.push_back(std::move(r));
  }
  // The chosen cluster first, then the feasible ones by score, then the rest by name.
  std::sort(out.begin(), out.end(), [](const PlacementVerdictRow& a, const PlacementVerdictRow& b) {
    return std::tuple(!a.chosen, !a.feasible, -a.score.value_or(0), a.cluster) <
           std::tuple(!b.chosen, !b.feasible, -b.score.value_or(0), b.cluster);
  });
  return out;
}

}  // namespace orch
