#include "bench/bench_util.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

namespace orch::bench {

double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double max_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

std::string usage_text(const std::string& program, const std::string& summary,
                       const std::vector<Flag>& flags) {
  std::string text = "usage: " + program;
  for (const Flag& f : flags) text += " [" + f.name + " " + f.value + "]";
  text += " [--help]\n";
  if (!summary.empty()) text += summary + "\n";
  std::size_t width = 0;
  for (const Flag& f : flags) width = std::max(width, f.name.size() + 1 + f.value.size());
  for (const Flag& f : flags) {
    std::string left = f.name + " " + f.value;
    text += "  " + left + std::string(width - left.size() + 2, ' ') + f.help + "\n";
  }
  return text;
}

std::optional<int> parse_flags(int argc, const char* const* argv, const std::string& program,
                               const std::string& summary, const std::vector<Flag>& flags,
                               std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& why) {
    err << program << ": " << why << "\n" << usage_text(program, summary, flags);
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      out << usage_text(program, summary, flags);
      return 0;
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto flag =
        std::find_if(flags.begin(), flags.end(), [&](const Flag& f) { return f.name == arg; });
    if (flag == flags.end()) return fail("unknown argument '" + arg + "'");
    if (i + 1 >= argc) return fail(arg + " needs a value (" + flag->value + ")");
    const std::string text = argv[++i];
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const bool number = ec == std::errc() && end == text.data() + text.size() && std::isfinite(v);
    if (!number || v < flag->min || v > flag->max || (flag->whole && v != std::floor(v))) {
      std::ostringstream range;
      range << (flag->whole ? "a whole number" : "a number") << " from " << flag->min << " to "
            << flag->max;
      return fail(arg + " wants " + range.str() + ", got '" + text + "'");
    }
    flag->set(v);
  }
  return std::nullopt;
}

std::optional<int> parse_flags(int argc, const char* const* argv, const std::string& program,
                               const std::string& summary, const std::vector<Flag>& flags) {
  return parse_flags(argc, argv, program, summary, flags, std::cout, std::cerr);
}

}  // namespace orch::bench
