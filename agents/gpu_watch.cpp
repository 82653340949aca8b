// See gpu_watch.h.
#include "agents/gpu_watch.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "agents/json_writer.h"
#include "agents/xid_log.h"
#include "scheduler/model/xid_codes.h"

namespace orch::agent {
namespace {

constexpr std::string_view kXidMarker = "NVRM: Xid";
constexpr size_t kMaxDescription = 200;

std::string_view strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool all_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// The description after "<code>, ": the comma-separated parts that are not pid=/name= fields.
std::string xid_description(std::string_view after_code) {
  std::string out;
  while (!after_code.empty()) {
    size_t comma = after_code.find(", ");
    std::string_view part = strip(after_code.substr(0, comma));
    after_code = comma == std::string_view::npos ? std::string_view() : after_code.substr(comma + 2);
    if (out.empty() && (part.rfind("pid=", 0) == 0 || part.rfind("name=", 0) == 0)) continue;
    out += (out.empty() ? "" : ", ") + std::string(part);
  }
  while (!out.empty() && out.back() == '.') out.pop_back();
  if (out.size() > kMaxDescription) out.resize(kMaxDescription);
  return out;
}

std::optional<double> value_of(std::string_view field) {
  field = strip(field);
  if (field.empty() || field.front() == '[' || field == "N/A") return std::nullopt;
  std::string text(field);
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> hex_mask(std::string_view field) {
  field = strip(field);
  if (field.size() < 3 || field.substr(0, 2) != "0x" || !all_hex(field.substr(2))) {
    return std::nullopt;
  }
  return std::strtoull(std::string(field.substr(2)).c_str(), nullptr, 16);
}

}  // namespace

std::optional<XidEvent> parse_xid_event(std::string_view line) {
  auto code = xid_code(line);
  if (!code) return std::nullopt;
  XidEvent e;
  e.code = *code;
  std::string_view rest = line.substr(line.find(kXidMarker) + kXidMarker.size());
  size_t open = rest.find('(');
  size_t close = rest.find(')');
  size_t colon = rest.find(':');
  if (open != std::string_view::npos && close != std::string_view::npos && open < close &&
      open < colon) {
    e.pci = normalize_pci(rest.substr(open + 1, close - open - 1));
    rest.remove_prefix(close + 1);
  }
  // ": 79, pid=..., GPU has fallen off the bus."
  size_t comma = rest.find(',');
  if (comma != std::string_view::npos) e.description = xid_description(rest.substr(comma + 1));
  return e;
}

std::string normalize_pci(std::string_view id) {
  id = strip(id);
  if (id.rfind("PCI:", 0) == 0) id.remove_prefix(4);
  if (size_t dot = id.find('.'); dot != std::string_view::npos) id = id.substr(0, dot);
  // domain:bus:device
  size_t first = id.find(':');
  size_t second = first == std::string_view::npos ? first : id.find(':', first + 1);
  if (second == std::string_view::npos) return "";
  std::string_view domain = id.substr(0, first), bus = id.substr(first + 1, second - first - 1),
                   device = id.substr(second + 1);
  if (!all_hex(domain) || !all_hex(bus) || !all_hex(device) || domain.size() > 8 ||
      bus.size() > 2 || device.size() > 2) {
    return "";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lx:%02lx:%02lx",
                std::strtoul(std::string(domain).c_str(), nullptr, 16),
                std::strtoul(std::string(bus).c_str(), nullptr, 16),
                std::strtoul(std::string(device).c_str(), nullptr, 16));
  return buf;
}

std::vector<std::string> watch_query_arguments() {
  return {std::string("--query-gpu=") + kWatchQueryFields, "--format=csv,noheader,nounits"};
}

std::vector<GpuSample> parse_watch_sample(std::string_view csv) {
  std::vector<GpuSample> out;
  while (!csv.empty()) {
    size_t nl = csv.find('\n');
    std::string_view line = csv.substr(0, nl);
    csv = nl == std::string_view::npos ? std::string_view() : csv.substr(nl + 1);
    std::vector<std::string_view> f;
    for (size_t start = 0;;) {
      size_t comma = line.find(',', start);
      f.push_back(line.substr(start, comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    auto index = value_of(f[0]);
    if (f.size() != 6 || !index || *index < 0 || *index != std::floor(*index)) continue;
    GpuSample s;
    s.index = static_cast<int>(*index);
    s.pci = normalize_pci(f[1]);
    if (auto ecc = value_of(f[2]); ecc && *ecc >= 0) {
      s.ecc_uncorrected = static_cast<std::int64_t>(*ecc);
    }
    s.temperature_c = value_of(f[3]);
    s.power_w = value_of(f[4]);
    s.throttle_mask = hex_mask(f[5]);
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> throttle_names(std::uint64_t mask) {
  // nvidia-smi --help-query-gpu, clocks_event_reasons.*: the bits of nvmlClocksEventReasons.
  static const std::pair<std::uint64_t, const char*> kBits[] = {{0x4, "sw_power_cap"},
                                                                {0x8, "hw_slowdown"},
                                                                {0x20, "sw_thermal"},
                                                                {0x40, "hw_thermal"},
                                                                {0x80, "hw_power_brake"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kBits) {
    if (mask & bit) out.emplace_back(name);
  }
  return out;
}

std::optional<int> GpuWatch::gpu_of(const std::string& pci) const {
  auto it = pci_to_gpu_.find(pci);
  if (it == pci_to_gpu_.end()) return std::nullopt;
  return it->second;
}

std::optional<GpuFault> GpuWatch::first(GpuFault f) {
  if (fault_) return std::nullopt;
  fault_ = std::move(f);
  return fault_;
}

std::optional<GpuFault> GpuWatch::on_kernel_line(std::string_view line, std::int64_t wall_ms) {
  if (fault_ || line.find(kXidMarker) == std::string_view::npos) return std::nullopt;
  auto xid = parse_xid_event(line);
  if (!xid || !is_reset_xid(xid->code)) return std::nullopt;
  GpuFault f;
  f.cause = "gpu_xid";
  f.xid = xid->code;
  f.pci = xid->pci;
  f.gpu = gpu_of(xid->pci);
  f.at_ms = wall_ms;
  f.detail = "Xid " + std::to_string(xid->code);
  if (f.gpu) f.detail += " on GPU " + std::to_string(*f.gpu);
  if (!f.pci.empty()) f.detail += (f.gpu ? " (PCI " + f.pci + ")" : " on PCI " + f.pci);
  if (!xid->description.empty()) f.detail += ": " + xid->description;
  return first(std::move(f));
}

std::optional<GpuFault> GpuWatch::on_sample(const std::vector<GpuSample>& gpus,
                                            std::int64_t wall_ms) {
  std::optional<double> temp_max, power;
  std::optional<std::int64_t> ecc_total;
  std::set<std::string> throttle;
  std::optional<GpuFault> found;
  for (const GpuSample& g : gpus) {
    if (!g.pci.empty()) pci_to_gpu_[g.pci] = g.index;
    if (g.temperature_c) temp_max = std::max(temp_max.value_or(*g.temperature_c), *g.temperature_c);
    if (g.power_w) power = power.value_or(0) + *g.power_w;
    if (g.throttle_mask) {
      for (auto& name : throttle_names(*g.throttle_mask)) throttle.insert(name);
    }
    if (!g.ecc_uncorrected) continue;
    ecc_total = ecc_total.value_or(0) + *g.ecc_uncorrected;
    auto [base, fresh] = ecc_baseline_.emplace(g.index, *g.ecc_uncorrected);
    if (fresh || *g.ecc_uncorrected <= base->second || found) continue;
    GpuFault f;
    f.cause = "gpu_ecc";
    f.gpu = g.index;
    f.pci = g.pci;
    f.ecc_uncorrected = *g.ecc_uncorrected;
    f.at_ms = wall_ms;
    f.detail = "uncorrectable ECC errors on GPU " + std::to_string(g.index) +
               (g.pci.empty() ? "" : " (PCI " + g.pci + ")") + " rose from " +
               std::to_string(base->second) + " to " + std::to_string(*g.ecc_uncorrected);
    found = std::move(f);
  }
  JsonWriter w;
  w.begin_object();
  w.optional_member("temp_max_c", temp_max, 1);
  w.optional_member("power_w", power, 1);
  w.optional_member("ecc_uncorrected", ecc_total);
  w.key("throttle");
  w.begin_array();
  for (const auto& name : throttle) w.string(name);
  w.end_array();
  w.member("gpus", static_cast<std::int64_t>(gpus.size()));
  w.end_object();
  watch_json_ = w.str();
  return found ? first(std::move(*found)) : std::nullopt;
}

void GpuWatch::on_sample_error(const std::string& why) {
  JsonWriter w;
  w.begin_object();
  w.member("error", why);
  w.end_object();
  watch_json_ = w.str();
}

std::string fault_members(const GpuFault& f, const std::string& node, std::int64_t task_rank) {
  JsonWriter w;
  w.begin_object();
  w.member("cause", f.cause);
  w.optional_member("gpu", f.gpu ? std::optional<std::int64_t>(*f.gpu) : std::nullopt);
  if (!f.pci.empty()) w.member("pci", f.pci);
  w.optional_member("xid", f.xid ? std::optional<std::int64_t>(*f.xid) : std::nullopt);
  w.optional_member("ecc_uncorrected", f.ecc_uncorrected);
  w.member("detail", f.detail);
  w.member("node", node);
  if (task_rank >= 0) w.member("task_rank", task_rank);
  w.member("at_ms", f.at_ms);
  w.end_object();
  // Without the braces: the caller puts them in an object of its own.
  const std::string& s = w.str();
  return s.substr(1, s.size() - 2);
}

}  // namespace orch::agent
