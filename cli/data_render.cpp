// Tables of checkpoints, datasets and transfers (data_render.h).
#include "cli/data_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "cli/output_table.h"

namespace orch {
namespace {

using nlohmann::json;

double number_or(const json& value, double fallback) {
  return value.is_number() ? value.get<double>() : fallback;
}

// "alpha:verified beta:copying", or "-" without copies; a copy on one node's own disk as
// "alpha/alpha-n0:verified".
std::string copies(const json& replicas) {
  std::string out;
  if (!replicas.is_array()) return "-";
  for (const auto& r : replicas) {
    const std::string node =
        r.contains("node") && r["node"].is_string() ? "/" + text(r, "node") : "";
    out += (out.empty() ? "" : " ") + text(r, "cluster") + node + ":" + text(r, "state");
  }
  return out.empty() ? "-" : out;
}

std::string mb_s(const json& value) {
  if (!value.is_number()) return "-";
  return decimal(value, 1) + " MB/s";
}

// The cap a transfer runs at: "-" uncapped, "25/100 MB/s" while throttled below its base cap.
std::string cap(const json& t) {
  const json& now = member(t, "cap_mb_s");
  const json& base = member(t, "base_cap_mb_s");
  if (!now.is_number()) return "-";
  if (base.is_number() && base.get<double>() > now.get<double>()) {
    return decimal(now, 1) + "/" + decimal(base, 1) + " MB/s";
  }
  return mb_s(now);
}

std::string eta(const json& t) {
  if (text(t, "state") != "running") return "-";
  const double rate = number_or(member(t, "rate_mb_s"), 0) * 1e6;
  const double total = number_or(member(t, "bytes_total"), 0);
  const double done = number_or(member(t, "bytes_done"), 0);
  if (rate <= 0 || total <= 0) return "-";
  return human_duration(std::max(0.0, total - done) / rate);
}

// A rate for people from MB/s: "2.5 MB/s", "540 B/s" (a few-kB copy), "-" for none.
std::string human_rate(const json& mb_per_s) {
  if (!mb_per_s.is_number()) return "-";
  return human_bytes(json(mb_per_s.get<double>() * 1e6)) + "/s";
}

// Running: the rate now; copied: the copy's average, marked "avg".
std::string rate(const json& t) {
  const json& r = member(t, "rate_mb_s");
  if (!r.is_number()) return "-";
  return human_rate(r) + (text(t, "state") == "running" ? "" : " avg");
}

// "checkpoint replication of job 3 · 1 running, 2 failed · 1.2 GB of 4.0 GB · 25.0 MB/s".
std::string group_heading(const json& g) {
  std::string states;
  const json& counts = member(g, "states");
  if (counts.is_object()) {
    for (const char* state : {"queued", "running", "verifying", "failed", "done", "cancelled"}) {
      if (!counts.contains(state)) continue;
      states += (states.empty() ? "" : ", ") + cell(counts[state]) + " " + state;
    }
  }
  std::string heading = text(g, "label");
  if (!states.empty()) heading += " · " + states;
  heading +=
      " · " + human_bytes(member(g, "bytes_done")) + " of " + human_bytes(member(g, "bytes_total"));
  if (member(g, "rate_mb_s").is_number()) heading += " · " + human_rate(member(g, "rate_mb_s"));
  return heading;
}

std::string two_digits(long long value) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "%02lld", value % 100);
  return buffer;
}

}  // namespace

std::string human_bytes(const json& bytes) {
  if (!bytes.is_number()) return "-";
  double value = bytes.get<double>();
  if (value < 0) return "-";
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  std::size_t unit = 0;
  while (value >= 999.95 && unit + 1 < std::size(kUnits)) {
    value /= 1000;
    ++unit;
  }
  if (unit == 0) return std::to_string(static_cast<long long>(value)) + " B";
  return decimal(json(value), value < 99.95 ? 1 : 0) + " " + kUnits[unit];
}

std::string human_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "-";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + two_digits(s % 60) + "s";
  if (s < 86400) return std::to_string(s / 3600) + "h" + two_digits(s % 3600 / 60) + "m";
  return std::to_string(s / 86400) + "d" + two_digits(s % 86400 / 3600) + "h";
}

std::string progress_bar(const json& percent, int width) {
  if (!percent.is_number()) return "-";
  const double p = std::clamp(percent.get<double>(), 0.0, 100.0);
  const int filled = static_cast<int>(std::floor(p / 100.0 * width + 1e-9));
  char number[8];
  std::snprintf(number, sizeof number, "%3d%%", static_cast<int>(std::floor(p + 1e-9)));
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + number;
}

bool any_transfer_active(const json& body) {
  for (const auto& t : items(body, "transfers")) {
    const std::string state = text(t, "state");
    if (state == "queued" || state == "running" || state == "verifying") return true;
  }
  return false;
}

void render_checkpoints(const json& body, std::int64_t now_ms, std::ostream& out) {
  Table table({"STEP", "SAVED_AT", "SIZE", "FILES", "VERIFIED", "COPIES", "AGE"});
  for (const auto& c : items(body, "checkpoints")) {
    const json& at = member(c, "at_ms");
    const std::string age =
        at.is_number() ? human_duration((static_cast<double>(now_ms) - at.get<double>()) / 1000.0)
                       : "-";
    table.add_row({field(c, "step"), field(c, "cluster"), human_bytes(member(c, "bytes")),
                   field(c, "files"), field(c, "verified"), copies(member(c, "replicas")), age});
  }
  if (table.empty()) {
    out << "job " << field(body, "job") << " has no checkpoints yet\n";
    return;
  }
  table.print(out);
}

void render_datasets(const json& body, std::ostream& out) {
  Table table({"NAME", "SIZE", "REPLICAS"});
  for (const auto& d : items(body, "datasets")) {
    table.add_row(
        {field(d, "name"), human_bytes(member(d, "bytes")), copies(member(d, "replicas"))});
  }
  if (table.empty()) {
    out << "no datasets; `orchestrate data add NAME --cluster C --path P` registers one\n";
    return;
  }
  table.print(out);
}

void render_transfers(const json& body, bool all, std::ostream& out) {
  // The transfers by id; each group's table lists its own, in the page's order.
  std::map<std::string, const json*> by_id;
  for (const auto& t : items(body, "transfers")) by_id[field(t, "id")] = &t;
  std::vector<std::pair<std::string, std::vector<const json*>>> groups;
  for (const auto& g : items(body, "groups")) {
    std::vector<const json*> members;
    for (const auto& id : items(g, "transfers")) {
      if (auto it = by_id.find(cell(id)); it != by_id.end()) members.push_back(it->second);
    }
    groups.emplace_back(group_heading(g), std::move(members));
  }
  if (groups.empty() && !by_id.empty()) {  // a server from before groups: one table
    std::vector<const json*> members;
    for (const auto& t : items(body, "transfers")) members.push_back(&t);
    groups.emplace_back("", std::move(members));
  }
  if (groups.empty()) {
    out << (all ? "no transfers\n" : "no active or failed transfers (--all shows finished ones)\n");
    return;
  }
  std::vector<std::string> errors;
  bool first = true;
  for (const auto& [heading, members] : groups) {
    if (!first) out << '\n';
    first = false;
    if (!heading.empty()) out << heading << '\n';
    Table table({"ID", "WHAT", "FROM → TO", "STATE", "PROGRESS", "RATE", "CAP", "ETA"});
    for (const json* t : members) {
      const std::string route =
          field(member(*t, "from"), "cluster") + " → " + field(member(*t, "to"), "cluster");
      table.add_row({field(*t, "id"), field(*t, "what"), route, field(*t, "state"),
                     progress_bar(member(*t, "percent")), rate(*t), cap(*t), eta(*t)});
      const std::string state = text(*t, "state");
      if (!text(*t, "error").empty() && state != "done" && state != "cancelled") {
        errors.push_back("transfer " + field(*t, "id") + " (try " + field(*t, "tries") +
                         "): " + text(*t, "error"));
      }
    }
    table.print(out);
  }
  for (const auto& e : errors) out << e << '\n';
}

}  // namespace orch
