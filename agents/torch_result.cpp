// See torch_result.h.
#include "agents/torch_result.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "agents/mini_json.h"

namespace orch::agent {
namespace {

// Reads members of one object into typed fields, keeping the first mistake.
class Fields {
 public:
  Fields(const JsonValue& object, std::string where) : o_(object), where_(std::move(where)) {}

  void text(const char* key, std::string* out) {
    const JsonValue* v = o_.get(key);
    if (!v || v->kind == JsonValue::Kind::kNull) return;
    if (!v->is_string()) return wrong(key, "a string");
    *out = v->string;
  }
  void number(const char* key, std::optional<double>* out) {
    const JsonValue* v = o_.get(key);
    if (!v || v->kind == JsonValue::Kind::kNull) return;
    if (!v->is_number() || !std::isfinite(v->number)) return wrong(key, "a number");
    *out = v->number;
  }
  // A whole number in [0, max].
  void count(const char* key, double max, std::optional<std::int64_t>* out) {
    std::optional<double> d;
    number(key, &d);
    if (!d) return;
    if (*d < 0 || *d > max || std::floor(*d) != *d) return wrong(key, "a whole number in range");
    *out = static_cast<std::int64_t>(*d);
  }
  const std::string& error() const { return error_; }

 private:
  void wrong(const char* key, const char* what) {
    if (error_.empty()) error_ = "\"" + where_ + key + "\" must be " + what;
  }
  const JsonValue& o_;
  std::string where_;
  std::string error_;
};

std::optional<TorchGpu> parse_gpu(const JsonValue& v, size_t i, std::string* why) {
  const std::string where = "gpus[" + std::to_string(i) + "].";
  if (!v.is_object()) {
    *why = "\"gpus[" + std::to_string(i) + "]\" must be an object";
    return std::nullopt;
  }
  TorchGpu g;
  Fields f(v, where);
  std::optional<std::int64_t> index;
  f.count("index", 4096, &index);
  f.text("name", &g.name);
  f.number("tflops", &g.tflops);
  f.number("hbm_gb_s", &g.hbm_gb_s);
  f.count("n", 1 << 20, &g.n);
  if (f.error().empty() && !index) {
    *why = "missing \"" + where + "index\"";
    return std::nullopt;
  }
  if (!f.error().empty()) {
    *why = f.error();
    return std::nullopt;
  }
  g.index = static_cast<int>(*index);
  return g;
}

// The last line of `out` that starts with '{' (after blanks), or "" when none does.
std::string_view last_object_line(std::string_view out) {
  std::string_view found;
  size_t start = 0;
  while (start < out.size()) {
    size_t nl = out.find('\n', start);
    if (nl == std::string_view::npos) nl = out.size();
    std::string_view line = out.substr(start, nl - start);
    start = nl + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty() && line.front() == '{') found = line;
  }
  return found;
}

std::string figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

// "690-712" or "705" when all are the same; "" when no value is known.
std::string span(const std::vector<TorchGpu>& gpus, std::optional<double> TorchGpu::*field) {
  std::vector<double> v;
  for (const TorchGpu& g : gpus) {
    if (g.*field) v.push_back(*(g.*field));
  }
  if (v.empty()) return "";
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return figure(*lo) == figure(*hi) ? figure(*lo) : figure(*lo) + "-" + figure(*hi);
}

}  // namespace

std::optional<TorchReading> parse_torch_output(std::string_view out, std::string* why) {
  std::string_view line = last_object_line(out);
  if (line.empty()) {
    *why = "the torch probe printed no result line";
    return std::nullopt;
  }
  std::string error;
  std::optional<JsonValue> j = parse_json(line, &error);
  if (!j) {
    *why = "the torch probe's result is not JSON: " + error;
    return std::nullopt;
  }
  if (!j->is_object()) {
    *why = "the torch probe's result is not a JSON object";
    return std::nullopt;
  }
  TorchReading r;
  Fields f(*j, "");
  f.text("device", &r.device);
  f.text("dtype", &r.dtype);
  f.text("version", &r.version);
  f.text("error", &r.error);
  f.number("allreduce_busbw_gb_s", &r.allreduce_busbw_gb_s);
  f.count("allreduce_bytes", 1e15, &r.allreduce_bytes);
  f.count("world", 4096, &r.world);
  f.number("seconds", &r.seconds);
  if (!f.error().empty()) {
    *why = "the torch probe's result: " + f.error();
    return std::nullopt;
  }
  if (r.device != "" && r.device != "cuda" && r.device != "cpu") {
    *why = "the torch probe's result: unknown device \"" + r.device + "\"";
    return std::nullopt;
  }
  if (const JsonValue* gpus = j->get("gpus"); gpus && gpus->kind != JsonValue::Kind::kNull) {
    if (!gpus->is_array()) {
      *why = "the torch probe's result: \"gpus\" must be an array";
      return std::nullopt;
    }
    for (size_t i = 0; i < gpus->items.size() && i < 4096; ++i) {
      std::string gpu_why;
      std::optional<TorchGpu> g = parse_gpu(gpus->items[i], i, &gpu_why);
      if (!g) {
        *why = "the torch probe's result: " + gpu_why;
        return std::nullopt;
      }
      r.gpus.push_back(std::move(*g));
    }
  }
  if (r.error.empty() && r.device.empty()) {
    *why = "the torch probe's result names no device";
    return std::nullopt;
  }
  return r;
}

Check torch_check(const TorchReading& r) {
  Check c{"torch-probe", true, ""};
  std::vector<std::string> missing;
  for (const TorchGpu& g : r.gpus) {
    if (!g.tflops || *g.tflops <= 0) missing.push_back("gpu " + std::to_string(g.index) + " GEMM");
  }
  if (r.gpus.empty()) missing.push_back("no device measured");
  if (r.world && *r.world >= 2 && !r.allreduce_busbw_gb_s) missing.push_back("no all-reduce");
  c.ok = r.error.empty() && missing.empty();

  std::string figures = r.device + " " + r.dtype + ", ";
  figures += r.device == "cuda" ? std::to_string(r.gpus.size()) + " GPUs" : "CPU";
  if (std::string t = span(r.gpus, &TorchGpu::tflops); !t.empty())
    figures += ": GEMM " + t + " TFLOPS";
  if (std::string b = span(r.gpus, &TorchGpu::hbm_gb_s); !b.empty())
    figures += ", copy " + b + " GB/s";
  if (r.allreduce_busbw_gb_s) {
    figures += ", all-reduce busbw " + figure(*r.allreduce_busbw_gb_s) + " GB/s";
    if (r.world) figures += " over " + std::to_string(*r.world);
  }
  std::string about = "torch " + (r.version.empty() ? std::string("?") : r.version);
  if (r.seconds) about += ", " + figure(*r.seconds) + " s";
  if (c.ok) {
    c.detail = figures + " (" + about + ")";
  } else if (!r.error.empty()) {
    c.detail = r.error + (r.device.empty() ? "" : " (measured: " + figures + ")");
  } else {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    c.detail = "incomplete: " + list + " (" + figures + "; " + about + ")";
  }
  if (c.detail.size() > 600) c.detail = c.detail.substr(0, 600) + "...";
  return c;
}

std::optional<double> torch_median_gpu_tflops(const TorchReading& r) {
  if (r.device != "cuda") return std::nullopt;
  std::vector<double> v;
  for (const TorchGpu& g : r.gpus) {
    if (g.tflops && *g.tflops > 0) v.push_back(*g.tflops);
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

}  // namespace orch::agent
