// See probe_result.h. The reader of `orchestrate-agent probe` lines (agents/README.md, "Probe
// output"). Unknown fields are ignored so the agent can add some; a missing or mistyped field the
// scheduler relies on is an error that names it.
#include "scheduler/model/probe_result.h"

#include <cstdint>
#include <nlohmann/json.hpp>

namespace orch {
namespace {

using nlohmann::json;

Error bad(const std::string& why) {
  return make_error(ErrorKind::invalid, "bad probe line: " + why);
}

std::string quoted(const std::string& path) {
  return "\"" + path + "\"";
}

// The member `key` of j, or nullptr when absent or null (the agent leaves unknown values out, a
// hand-written or future line may write null).
const json* member(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<std::string> req_string(const json& j, const char* key, const std::string& where) {
  const json* v = member(j, key);
  if (!v) return bad("missing " + quoted(where + key));
  if (!v->is_string()) return bad(quoted(where + key) + " must be a string");
  return v->get<std::string>();
}

Result<std::string> opt_string(const json& j, const char* key, const std::string& where) {
  const json* v = member(j, key);
  if (!v) return std::string();
  if (!v->is_string()) return bad(quoted(where + key) + " must be a string");
  return v->get<std::string>();
}

Result<bool> req_bool(const json& j, const char* key, const std::string& where) {
  const json* v = member(j, key);
  if (!v) return bad("missing " + quoted(where + key));
  if (!v->is_boolean()) return bad(quoted(where + key) + " must be true or false");
  return v->get<bool>();
}

Result<std::optional<bool>> opt_bool(const json& j, const char* key, const std::string& where) {
  const json* v = member(j, key);
  if (!v) return std::optional<bool>{};
  if (!v->is_boolean()) return bad(quoted(where + key) + " must be true or false");
  return std::optional<bool>{v->get<bool>()};
}

Result<std::optional<std::int64_t>> opt_int(const json& j, const char* key,
                                            const std::string& where, bool non_negative) {
  const json* v = member(j, key);
  if (!v) return std::optional<std::int64_t>{};
  if (!v->is_number_integer()) return bad(quoted(where + key) + " must be an integer");
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    return bad(quoted(where + key) + " is out of range");
  }
  auto n = v->get<std::int64_t>();
  if (non_negative && n < 0) return bad(quoted(where + key) + " must be >= 0");
  return std::optional<std::int64_t>{n};
}

Result<std::optional<double>> opt_number(const json& j, const char* key, const std::string& where) {
  const json* v = member(j, key);
  if (!v) return std::optional<double>{};
  if (!v->is_number()) return bad(quoted(where + key) + " must be a number");
  return std::optional<double>{v->get<double>()};
}

const json* opt_object(const json& j, const char* key, const std::string& where,
                       std::optional<Error>* error) {
  const json* v = member(j, key);
  if (v && !v->is_object()) {
    *error = bad(quoted(where + key) + " must be an object");
    return nullptr;
  }
  return v;
}

const json* opt_array(const json& j, const char* key, std::optional<Error>* error) {
  const json* v = member(j, key);
  if (v && !v->is_array()) {
    *error = bad(quoted(key) + " must be an array");
    return nullptr;
  }
  return v;
}

// Assigns r's value to *out, or records its error; false on error.
template <typename T>
bool take(Result<T> r, T* out, std::optional<Error>* error) {
  if (!r) {
    *error = r.error();
    return false;
  }
  *out = std::move(r).value();
  return true;
}

Result<ProbeCheck> parse_check(const json& j, size_t i) {
  std::string where = "checks[" + std::to_string(i) + "].";
  if (!j.is_object())
    return bad(quoted("checks[" + std::to_string(i) + "]") + " must be an object");
  ProbeCheck c;
  std::optional<Error> e;
  if (!take(req_string(j, "name", where), &c.name, &e) ||
      !take(req_bool(j, "ok", where), &c.ok, &e) ||
      !take(opt_string(j, "detail", where), &c.detail, &e)) {
    return *e;
  }
  if (c.name.empty()) return bad(quoted(where + "name") + " must not be empty");
  return c;
}

Result<std::optional<int>> opt_small(const json& j, const char* key, const std::string& where) {
  auto v = opt_int(j, key, where, true);
  if (!v) return v.error();
  if (*v && **v > 1'000'000) return bad(quoted(where + key) + " is out of range");
  return *v ? std::optional<int>(static_cast<int>(**v)) : std::nullopt;
}

// The fields the agent reads from `nvidia-smi -q -x` (PCIe, aggregate ECC, row remapping,
// throttle reasons, power, NVLinks); false with *e set on a mistyped one.
bool parse_gpu_xml_fields(const json& j, const std::string& where, GpuReading* g,
                          std::optional<Error>* e) {
  if (!take(opt_string(j, "pci_bus_id", where), &g->pci_bus_id, e) ||
      !take(opt_small(j, "pcie_gen", where), &g->pcie_gen, e) ||
      !take(opt_small(j, "pcie_gen_max", where), &g->pcie_gen_max, e) ||
      !take(opt_small(j, "pcie_width", where), &g->pcie_width, e) ||
      !take(opt_small(j, "pcie_width_max", where), &g->pcie_width_max, e) ||
      !take(opt_int(j, "ecc_uncorrected_aggregate", where, true), &g->ecc_uncorrected_aggregate,
            e) ||
      !take(opt_int(j, "ecc_corrected_aggregate", where, true), &g->ecc_corrected_aggregate, e) ||
      !take(opt_bool(j, "remapped_rows_pending", where), &g->remapped_rows_pending, e) ||
      !take(opt_bool(j, "remapped_rows_failure", where), &g->remapped_rows_failure, e) ||
      !take(opt_number(j, "power_w", where), &g->power_w, e) ||
      !take(opt_small(j, "nvlinks_down", where), &g->nvlinks_down, e)) {
    return false;
  }
  const json* throttle = member(j, "throttle");
  if (!throttle) return true;
  if (!throttle->is_array()) {
    *e = bad(quoted(where + "throttle") + " must be an array of strings");
    return false;
  }
  g->throttle.emplace();
  for (const json& r : *throttle) {
    if (!r.is_string()) {
      *e = bad(quoted(where + "throttle") + " must be an array of strings");
      return false;
    }
    g->throttle->push_back(r.get<std::string>());
  }
  return true;
}

// The "dcgm" member (DCGM's diagnostic), when present.
Result<std::optional<DcgmReading>> parse_dcgm(const json& line) {
  std::optional<Error> e;
  const json* j = opt_object(line, "dcgm", "", &e);
  if (e) return *e;
  if (!j) return std::optional<DcgmReading>{};
  DcgmReading d;
  std::optional<int> level;
  if (!take(opt_small(*j, "level", "dcgm."), &level, &e)) return *e;
  d.level = level.value_or(0);
  const json* tests = member(*j, "tests");
  if (tests && !tests->is_array()) return bad("\"dcgm.tests\" must be an array");
  for (size_t i = 0; tests && i < tests->size(); ++i) {
    std::string where = "dcgm.tests[" + std::to_string(i) + "].";
    const json& t = (*tests)[i];
    if (!t.is_object())
      return bad(quoted(where.substr(0, where.size() - 1)) + " must be an object");
    DcgmTestReading r;
    if (!take(req_string(t, "name", where), &r.name, &e) ||
        !take(opt_small(t, "gpu", where), &r.gpu, &e) ||
        !take(req_string(t, "result", where), &r.result, &e) ||
        !take(opt_string(t, "info", where), &r.info, &e)) {
      return *e;
    }
    d.tests.push_back(std::move(r));
  }
  return std::optional<DcgmReading>{std::move(d)};
}

Result<GpuReading> parse_gpu(const json& j, size_t i) {
  std::string where = "gpus[" + std::to_string(i) + "].";
  if (!j.is_object()) return bad(quoted("gpus[" + std::to_string(i) + "]") + " must be an object");
  GpuReading g;
  std::optional<Error> e;
  std::optional<std::int64_t> index;
  if (!take(opt_int(j, "index", where, true), &index, &e)) return *e;
  if (!index) return bad("missing " + quoted(where + "index"));
  if (*index > 1'000'000) return bad(quoted(where + "index") + " is out of range");
  g.index = static_cast<int>(*index);
  if (!take(opt_string(j, "name", where), &g.name, &e) ||
      !take(opt_string(j, "uuid", where), &g.uuid, &e) ||
      !take(opt_number(j, "temperature_c", where), &g.temperature_c, &e) ||
      !take(opt_number(j, "sm_clock_mhz", where), &g.sm_clock_mhz, &e) ||
      !take(opt_number(j, "max_sm_clock_mhz", where), &g.max_sm_clock_mhz, &e) ||
      !take(opt_int(j, "ecc_uncorrected", where, true), &g.ecc_uncorrected, &e) ||
      !take(opt_int(j, "ecc_corrected", where, true), &g.ecc_corrected, &e) ||
      !take(opt_int(j, "retired_pages_dbe", where, true), &g.retired_pages_dbe, &e) ||
      !take(opt_bool(j, "retired_pages_pending", where), &g.retired_pages_pending, &e) ||
      !parse_gpu_xml_fields(j, where, &g, &e)) {
    return *e;
  }
  return g;
}

Result<TorchGpuReading> parse_torch_gpu(const json& j, size_t i) {
  std::string where = "torch.gpus[" + std::to_string(i) + "].";
  if (!j.is_object()) {
    return bad(quoted("torch.gpus[" + std::to_string(i) + "]") + " must be an object");
  }
  TorchGpuReading g;
  std::optional<Error> e;
  std::optional<std::int64_t> index;
  if (!take(opt_int(j, "index", where, true), &index, &e)) return *e;
  if (!index) return bad("missing " + quoted(where + "index"));
  if (*index > 1'000'000) return bad(quoted(where + "index") + " is out of range");
  g.index = static_cast<int>(*index);
  if (!take(opt_string(j, "name", where), &g.name, &e) ||
      !take(opt_number(j, "tflops", where), &g.tflops, &e) ||
      !take(opt_number(j, "hbm_gb_s", where), &g.hbm_gb_s, &e)) {
    return *e;
  }
  return g;
}

// The "torch" member (the bundled PyTorch probe), when present.
Result<std::optional<TorchReading>> parse_torch(const json& line) {
  std::optional<Error> e;
  const json* j = opt_object(line, "torch", "", &e);
  if (e) return *e;
  if (!j) return std::optional<TorchReading>{};
  TorchReading t;
  if (!take(opt_string(*j, "device", "torch."), &t.device, &e) ||
      !take(opt_string(*j, "dtype", "torch."), &t.dtype, &e) ||
      !take(opt_number(*j, "allreduce_busbw_gb_s", "torch."), &t.allreduce_busbw_gb_s, &e) ||
      !take(opt_int(*j, "world", "torch.", true), &t.world, &e) ||
      !take(opt_number(*j, "seconds", "torch."), &t.seconds, &e)) {
    return *e;
  }
  if (const json* gpus = member(*j, "gpus")) {
    if (!gpus->is_array()) return bad("\"torch.gpus\" must be an array");
    for (size_t i = 0; i < gpus->size(); ++i) {
      auto g = parse_torch_gpu((*gpus)[i], i);
      if (!g) return g.error();
      t.gpus.push_back(std::move(g).value());
    }
  }
  return std::optional<TorchReading>{std::move(t)};
}

}  // namespace

Result<ProbeResult> parse_probe_result(std::string_view line) {
  std::string_view body = line;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.remove_suffix(1);
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not valid JSON");
  if (!j.is_object()) return bad("expected a JSON object");

  ProbeResult r;
  std::optional<Error> e;
  std::optional<std::int64_t> version;
  if (!take(opt_int(j, "probe", "", true), &version, &e)) return *e;
  if (!version) return bad("missing \"probe\" (the schema version; is this a probe line?)");
  if (*version < 1) return bad("\"probe\" must be >= 1");
  std::optional<std::int64_t> at_ms;
  if (!take(req_string(j, "node", ""), &r.node, &e) ||
      !take(opt_string(j, "hostname", ""), &r.hostname, &e) ||
      !take(opt_int(j, "at_ms", "", true), &at_ms, &e) || !take(req_bool(j, "ok", ""), &r.ok, &e)) {
    return *e;
  }
  if (r.node.empty()) return bad("\"node\" must not be empty");
  if (!at_ms) return bad("missing \"at_ms\"");
  r.at_ms = *at_ms;

  const json* checks = member(j, "checks");
  if (!checks) return bad("missing \"checks\"");
  if (!checks->is_array()) return bad("\"checks\" must be an array");
  for (size_t i = 0; i < checks->size(); ++i) {
    auto c = parse_check((*checks)[i], i);
    if (!c) return c.error();
    r.checks.push_back(std::move(c).value());
  }

  if (const json* compute = opt_object(j, "compute", "", &e)) {
    if (!take(opt_number(*compute, "gflops", "compute."), &r.gemm_gflops, &e) ||
        !take(opt_string(*compute, "kind", "compute."), &r.compute_kind, &e)) {
      return *e;
    }
  }
  if (e) return *e;
  if (const json* io = opt_object(j, "io", "", &e)) {
    if (!take(opt_string(*io, "dir", "io."), &r.dir, &e) ||
        !take(opt_number(*io, "write_mb_s", "io."), &r.write_mb_s, &e) ||
        !take(opt_number(*io, "read_mb_s", "io."), &r.read_mb_s, &e) ||
        !take(opt_int(*io, "free_bytes", "io.", true), &r.free_bytes, &e)) {
      return *e;
    }
  }
  if (e) return *e;
  if (const json* gpus = opt_array(j, "gpus", &e)) {
    for (size_t i = 0; i < gpus->size(); ++i) {
      auto g = parse_gpu((*gpus)[i], i);
      if (!g) return g.error();
      r.gpus.push_back(std::move(g).value());
    }
  }
  if (e) return *e;
  if (const json* xid = opt_array(j, "xid", &e)) {
    for (size_t i = 0; i < xid->size(); ++i) {
      if (!(*xid)[i].is_string()) {
        return bad(quoted("xid[" + std::to_string(i) + "]") + " must be a string");
      }
      r.xid_lines.push_back((*xid)[i].get<std::string>());
    }
  }
  if (e) return *e;
  if (!take(opt_small(j, "gpu_count", ""), &r.gpu_count, &e)) return *e;
  auto dcgm = parse_dcgm(j);
  if (!dcgm) return dcgm.error();
  r.dcgm = std::move(dcgm).value();
  auto torch = parse_torch(j);
  if (!torch) return torch.error();
  r.torch = std::move(torch).value();
  r.raw = std::string(body);
  return r;
}

Result<std::vector<ProbeResult>> parse_probe_output(std::string_view output) {
  std::vector<ProbeResult> out;
  size_t start = 0;
  int line_no = 0;
  while (start < output.size()) {
    size_t nl = output.find('\n', start);
    if (nl == std::string_view::npos) nl = output.size();
    std::string_view line = output.substr(start, nl - start);
    start = nl + 1;
    ++line_no;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() != '{') continue;
    auto r = parse_probe_result(line);
    if (!r) {
      return make_error(ErrorKind::invalid,
                        "line " + std::to_string(line_no) + ": " + r.error().message);
    }
    out.push_back(std::move(r).value());
  }
  return out;
}

}  // namespace orch
