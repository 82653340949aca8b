// Reading all_reduce_perf's output (all_reduce_perf.h).
#include "scheduler/model/all_reduce_perf.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "scheduler/common/text.h"

namespace orch {
namespace {

std::vector<std::string> words(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<double> number(const std::string& w) {
  if (w.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(w.c_str(), &end);
  if (errno != 0 || end != w.c_str() + w.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> integer(const std::string& w) {
  auto v = number(w);
  if (!v || *v < 0 || *v > 9e18 || std::floor(*v) != *v) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

// Where each column of the table is, from the header's names (the first `time`, `algbw`, `busbw`,
// `#wrong` are out-of-place, the second in-place).
struct Columns {
  int size = 0, count = 1, type = 2, redop = 3;
  int time[2] = {5, 9}, algbw[2] = {6, 10}, busbw[2] = {7, 11}, wrong[2] = {8, 12};
  std::size_t width = 13;
};

Columns columns_of(const std::vector<std::string>& names) {
  Columns c;
  int seen[4] = {0, 0, 0, 0};
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    const std::string& n = names[i];
    auto put = [&](int* where, int k) {
      if (seen[k] < 2) where[seen[k]++] = i;
    };
    if (n == "time") put(c.time, 0);
    if (n == "algbw") put(c.algbw, 1);
    if (n == "busbw") put(c.busbw, 2);
    // 1.x's `error` is the largest error, not a count: no column to read.
    if ((n == "#wrong" || n == "error") && seen[3] < 2) c.wrong[seen[3]++] = n == "error" ? -1 : i;
  }
  c.width = names.size();
  return c;
}

std::optional<double> at(const std::vector<std::string>& w, int i) {
  if (i < 0 || static_cast<std::size_t>(i) >= w.size()) return std::nullopt;
  return number(w[i]);
}

std::optional<AllReducePerfRow> row_of(const std::vector<std::string>& w, const Columns& c) {
  if (w.size() < 4) return std::nullopt;
  auto size = integer(w[c.size]);
  auto count = integer(w[c.count]);
  if (!size || !count) return std::nullopt;
  AllReducePerfRow r;
  r.size_bytes = *size;
  r.count = *count;
  r.type = w[c.type];
  r.redop = w[c.redop];
  r.out_time_us = at(w, c.time[0]);
  r.out_algbw_gb_s = at(w, c.algbw[0]);
  r.out_busbw_gb_s = at(w, c.busbw[0]);
  r.in_time_us = at(w, c.time[1]);
  r.in_algbw_gb_s = at(w, c.algbw[1]);
  r.in_busbw_gb_s = at(w, c.busbw[1]);
  for (int k = 0; k < 2; ++k) {
    const int i = c.wrong[k];
    if (i < 0 || static_cast<std::size_t>(i) >= w.size()) continue;
    (k == 0 ? r.out_wrong : r.in_wrong) = integer(w[i]);
  }
  return r;
}

// "# Avg bus bandwidth    : 40.3" -> 40.3 (and the same for "Out of bounds values").
std::optional<std::string> after_colon(std::string_view line, std::string_view key) {
  const auto k = line.find(key);
  if (k == std::string_view::npos) return std::nullopt;
  const auto colon = line.find(':', k + key.size());
  if (colon == std::string_view::npos) return std::nullopt;
  auto w = words(line.substr(colon + 1));
  if (w.empty()) return std::nullopt;
  return w.front();
}

}  // namespace

std::optional<double> AllReducePerfOutput::busbw_gb_s() const {
  const AllReducePerfRow* largest = nullptr;
  for (const auto& r : rows) {
    if (!largest || r.size_bytes >= largest->size_bytes) largest = &r;
  }
  if (largest && largest->out_busbw_gb_s) return largest->out_busbw_gb_s;
  if (largest && largest->in_busbw_gb_s) return largest->in_busbw_gb_s;
  return avg_busbw_gb_s;
}

std::string AllReducePerfOutput::problem() const {
  if (!failure.empty()) return failure;
  if (wrong > 0) return std::to_string(wrong) + " wrong value(s) in the results";
  if (out_of_bounds && *out_of_bounds > 0) {
    return std::to_string(*out_of_bounds) + " value(s) out of bounds";
  }
  if (!busbw_gb_s()) return "no bus bandwidth in its output";
  return "";
}

Result<AllReducePerfOutput> parse_all_reduce_perf(std::string_view text) {
  AllReducePerfOutput out;
  Columns cols;
  std::string first;
  for (const auto& raw : split(text, '\n')) {
    std::string_view line = raw;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (first.empty() && !line.empty()) first = std::string(line);
    auto w = words(line);
    if (w.empty()) continue;
    if (line.find("Avg bus bandwidth") != std::string_view::npos) {
      if (auto v = after_colon(line, "Avg bus bandwidth")) out.avg_busbw_gb_s = number(*v);
      continue;
    }
    if (line.find("Out of bounds values") != std::string_view::npos) {
      if (auto v = after_colon(line, "Out of bounds values")) out.out_of_bounds = integer(*v);
      continue;
    }
    if (out.failure.empty() && line.find("failure") != std::string_view::npos) {
      out.failure = quote_line(line);
      continue;
    }
    const bool comment = w.front()[0] == '#';
    if (w.front() == "#") w.erase(w.begin());
    // Some builds print the table's header without its "#".
    if (w.size() > 4 && w[0] == "size" && w[1] == "count") {
      cols = columns_of(w);
      continue;
    }
    if (comment) continue;
    if (auto r = row_of(w, cols)) {
      out.wrong += r->out_wrong.value_or(0) + r->in_wrong.value_or(0);
      out.rows.push_back(std::move(*r));
    }
  }
  if (out.rows.empty() && !out.avg_busbw_gb_s && out.failure.empty()) {
    return make_error(ErrorKind::invalid,
                      "all_reduce_perf printed no result row and no average bus bandwidth" +
                          (first.empty() ? std::string(" (no output)")
                                         : " (its first line: " + quote_line(first) + ")"));
  }
  return out;
}

}  // namespace orch
