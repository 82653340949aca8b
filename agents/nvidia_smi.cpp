// See nvidia_smi.h.
#include "agents/nvidia_smi.h"
#include "scheduler/common/text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace orch::agent {
namespace {

constexpr size_t kFieldCount = 10;  // the fields of kNvidiaSmiQueryFields

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// A number, or nullopt for anything else ("[N/A]", "[Not Supported]", an empty field).
std::optional<double> number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> count(std::string_view s) {
  auto v = number(s);
  if (!v || *v < 0 || *v != std::floor(*v) || *v > 9.0e18) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

std::optional<bool> yes_no(std::string_view s) {
  if (s == "Yes") return true;
  if (s == "No") return false;
  return std::nullopt;
}

std::string gpu_label(const GpuReading& g) {
  std::string s = "GPU " + std::to_string(g.index);
  if (!g.uuid.empty()) s += " (" + g.uuid + ")";
  return s;
}

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Check ecc_check(const std::vector<GpuReading>& gpus) {
  Check c{"gpu-ecc", true, ""};
  std::vector<std::string> bad;
  std::int64_t corrected = 0;
  int reported = 0;
  for (const GpuReading& g : gpus) {
    if (g.ecc_corrected) corrected += *g.ecc_corrected;
    if (!g.ecc_uncorrected) continue;
    ++reported;
    if (*g.ecc_uncorrected > 0) {
      bad.push_back(gpu_label(g) + ": " + std::to_string(*g.ecc_uncorrected) +
                    " uncorrected ECC errors since the driver loaded");
    }
  }
  if (!bad.empty()) {
    c.ok = false;
    c.detail = join(bad, "; ");
  } else if (reported == 0) {
    c.detail = "no GPU reports ECC counters (ECC off or not supported)";
  } else {
    c.detail = std::to_string(reported) + " GPUs, no uncorrected ECC errors (" +
               std::to_string(corrected) + " corrected)";
  }
  return c;
}

Check retired_pages_check(const std::vector<GpuReading>& gpus) {
  Check c{"gpu-retired-pages", true, ""};
  std::vector<std::string> bad;
  std::int64_t dbe = 0;
  int reported = 0;
  for (const GpuReading& g : gpus) {
    if (g.retired_pages_dbe) dbe += *g.retired_pages_dbe;
    if (!g.retired_pages_pending) continue;
    ++reported;
    if (*g.retired_pages_pending) {
      bad.push_back(gpu_label(g) + ": a page retirement is pending (reset the GPU)");
    }
  }
  if (!bad.empty()) {
    c.ok = false;
    c.detail = join(bad, "; ");
  } else if (reported == 0) {
    c.detail = "page retirement not reported (row remapping GPUs print [N/A])";
  } else {
    c.detail = std::to_string(reported) + " GPUs, no retirement pending (" + std::to_string(dbe) +
               " pages retired for double-bit errors)";
  }
  return c;
}

Check temperature_check(const std::vector<GpuReading>& gpus, double max_temp_c) {
  Check c{"gpu-temperature", true, ""};
  std::vector<std::string> bad;
  double hottest = -1;
  for (const GpuReading& g : gpus) {
    if (!g.temperature_c) continue;
    hottest = std::max(hottest, *g.temperature_c);
    if (*g.temperature_c > max_temp_c) {
      bad.push_back(gpu_label(g) + ": " + fmt_number(*g.temperature_c) + " C > " +
                    fmt_number(max_temp_c) + " C");
    }
  }
  if (!bad.empty()) {
    c.ok = false;
    c.detail = join(bad, "; ");
  } else if (hottest < 0) {
    c.detail = "no GPU reports its temperature";
  } else {
    c.detail = "hottest GPU " + fmt_number(hottest) + " C (limit " + fmt_number(max_temp_c) + " C)";
  }
  return c;
}

}  // namespace

std::vector<std::string> nvidia_smi_arguments() {
  return {std::string("--query-gpu=") + kNvidiaSmiQueryFields, "--format=csv,noheader,nounits"};
}

NvidiaSmiParse parse_nvidia_smi_csv(std::string_view text) {
  NvidiaSmiParse out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = trim(text.substr(start, nl - start));
    start = nl + 1;
    if (line.empty()) continue;
    std::vector<std::string_view> f = split_fields(line);
    auto index = count(f[0]);
    if (f.size() != kFieldCount || !index || *index > 1'000'000) {
      out.bad_lines.emplace_back(line.substr(0, 300));
      continue;
    }
    GpuReading g;
    g.index = static_cast<int>(*index);
    g.name = std::string(f[1]);
    g.uuid = std::string(f[2]);
    g.temperature_c = number(f[3]);
    g.sm_clock_mhz = number(f[4]);
    g.max_sm_clock_mhz = number(f[5]);
    g.ecc_uncorrected = count(f[6]);
    g.ecc_corrected = count(f[7]);
    g.retired_pages_dbe = count(f[8]);
    g.retired_pages_pending = yes_no(f[9]);
    out.gpus.push_back(std::move(g));
  }
  return out;
}

std::vector<Check> gpu_checks(const std::vector<GpuReading>& gpus, double max_temp_c) {
  return {ecc_check(gpus), retired_pages_check(gpus), temperature_check(gpus, max_temp_c)};
}

}  // namespace orch::agent
