// See probe_command.h.
#include "agents/probe_command.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>

#include "agents/agent_clock.h"
#include "agents/cli_values.h"
#include "agents/dcgm_diag.h"
#include "agents/fs_probe.h"
#include "agents/gemm_probe.h"
#include "agents/gpu_checks.h"
#include "agents/json_writer.h"
#include "agents/node_name.h"
#include "agents/nvidia_smi.h"
#include "agents/nvidia_smi_xml.h"
#include "agents/subprocess.h"
#include "agents/torch_probe.h"
#include "agents/xid_log.h"
#include "scheduler/model/launch_limits.h"

namespace orch::agent {
namespace {

constexpr int kProbeSchemaVersion = 1;

struct GpuSection {
  std::vector<GpuReading> gpus;
  std::optional<int> shown;   // the GPUs nvidia-smi listed (absent when it did not run)
  std::vector<Check> checks;  // empty when there is no nvidia-smi to ask
};

// The directory as an absolute path for the report ("." says nothing to whoever reads it).
std::string absolute_dir(const std::string& dir) {
  char buf[PATH_MAX];
  return realpath(dir.c_str(), buf) ? std::string(buf) : dir;
}

std::string first_line_of(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.substr(0, 300);
}

// Why a helper's run is not a clean answer, or "" when it exited 0 in time.
std::string run_failure(const std::string& program, const CapturedRun& run, double timeout_s,
                        const std::string& fallback_why) {
  if (!run.started) return run.error;
  if (run.timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    return program + " did not answer within " + limit + " s (killed)";
  }
  if (run.exit_code == 0) return "";
  std::string why = !run.err.empty() ? first_line_of(run.err) : fallback_why;
  return program + " failed (" +
         (run.signal ? "signal " + std::to_string(run.signal)
                     : "exit " + std::to_string(run.exit_code)) +
         ")" + (why.empty() ? "" : ": " + why);
}

// `nvidia-smi nvlink -s`: each GPU's NVLinks down and the gpu-nvlink check, on GPUs that have
// NVLinks. A driver or GPU without them answers with an error or no link lines: no check.
void probe_nvlinks(const std::string& program, double timeout_s, GpuSection* s) {
  CapturedRun run = run_captured({program, "nvlink", "-s"}, timeout_s);
  if (!run.started || run.timed_out || run.exit_code != 0) return;
  std::vector<NvlinkState> links = parse_nvlink_status(run.out);
  if (links.empty()) return;
  for (const NvlinkState& l : links) {
    for (GpuReading& g : s->gpus) {
      if (g.index == l.index) g.nvlinks_down = static_cast<int>(l.down.size());
    }
  }
  s->checks.push_back(nvlink_check(links));
}

GpuSection probe_gpus(const ProbeOptions& o) {
  GpuSection s;
  if (o.nvidia_smi == "none") return s;
  std::string program = o.nvidia_smi.empty() ? find_in_path("nvidia-smi") : o.nvidia_smi;
  if (program.empty()) {  // no NVIDIA driver here: a CPU node, nothing to check unless told
    if (o.expect_gpus > 0) {
      Check c = gpu_count_check(0, o.expect_gpus);
      c.detail += " (no nvidia-smi in PATH)";
      s.checks.push_back(c);
    }
    return s;
  }

  Check smi{"nvidia-smi", true, ""};
  std::vector<std::string> argv = {program};
  for (std::string& a : nvidia_smi_xml_arguments()) argv.push_back(std::move(a));
  CapturedRun run = run_captured(argv, o.nvidia_smi_timeout_s);
  NvidiaSmiXml parsed = parse_nvidia_smi_xml(run.out);
  s.gpus = parsed.gpus;
  s.shown = static_cast<int>(parsed.gpus.size());
  // A lost GPU's reason is on stderr or among the output ("Unable to determine the device
  // handle for GPU1: ..."), before or instead of the XML.
  std::string failure = run_failure(program, run, o.nvidia_smi_timeout_s, first_line_of(run.out));
  if (!failure.empty()) {
    smi.ok = false;
    smi.detail = failure;
  } else if (!parsed.error.empty()) {
    smi.ok = false;
    smi.detail = "unexpected nvidia-smi output: " + parsed.error;
  } else if (parsed.gpus.empty()) {
    smi.ok = false;
    smi.detail = "nvidia-smi lists no GPU";
  } else {
    smi.detail = std::to_string(parsed.gpus.size()) + " GPUs: " + parsed.gpus.front().name;
    if (!parsed.driver_version.empty()) smi.detail += ", driver " + parsed.driver_version;
  }
  s.checks.push_back(smi);
  if (o.expect_gpus > 0) s.checks.push_back(gpu_count_check(*s.shown, o.expect_gpus));
  if (!s.gpus.empty()) {
    for (Check& c : gpu_checks(s.gpus, o.max_gpu_temp_c)) s.checks.push_back(std::move(c));
    s.checks.push_back(pcie_check(s.gpus));
    s.checks.push_back(remapped_rows_check(s.gpus));
    s.checks.push_back(throttle_check(s.gpus));
    probe_nvlinks(program, o.nvidia_smi_timeout_s, &s);
  }
  return s;
}

// dcgmi diag -r LEVEL -j, when asked for; nullopt when not.
std::optional<std::pair<DcgmDiag, Check>> probe_dcgm(const ProbeOptions& o) {
  if (o.dcgm == "none") return std::nullopt;
  // A bare name ("dcgmi", the cluster spec's default) is looked up in PATH.
  std::string program = o.dcgm.find('/') == std::string::npos
                            ? find_in_path(o.dcgm.empty() ? "dcgmi" : o.dcgm)
                            : o.dcgm;
  DcgmDiag diag;
  if (program.empty())
    return std::make_pair(
        diag, dcgm_check(diag, o.dcgm_level,
                         "no " + (o.dcgm.empty() ? std::string("dcgmi") : o.dcgm) + " in PATH"));
  static constexpr double kByLevel[] = {300, 300, 900, 3600};
  double timeout_s = o.dcgm_timeout_s > 0 ? o.dcgm_timeout_s : kByLevel[o.dcgm_level];
  std::vector<std::string> argv = {program};
  for (std::string& a : dcgmi_diag_arguments(o.dcgm_level)) argv.push_back(std::move(a));
  CapturedRun run = run_captured(argv, timeout_s);
  diag = parse_dcgm_diag_json(run.out);
  // dcgmi exits non-zero when a test fails; its report then says which, and is what counts.
  std::string why = diag.tests.empty() || run.timed_out
                        ? run_failure(program, run, timeout_s, first_line_of(run.out))
                        : "";
  return std::make_pair(diag, dcgm_check(diag, o.dcgm_level, why));
}

void write_checks(JsonWriter& w, const std::vector<Check>& checks) {
  w.key("checks");
  w.begin_array();
  for (const Check& c : checks) {
    w.begin_object();
    w.member("name", c.name);
    w.member_bool("ok", c.ok);
    w.member("detail", c.detail);
    w.end_object();
  }
  w.end_array();
}

void write_gpus(JsonWriter& w, const std::vector<GpuReading>& gpus) {
  w.key("gpus");
  w.begin_array();
  for (const GpuReading& g : gpus) {
    w.begin_object();
    w.member("index", g.index);
    w.member("name", g.name);
    w.member("uuid", g.uuid);
    w.optional_member("temperature_c", g.temperature_c, 1);
    w.optional_member("sm_clock_mhz", g.sm_clock_mhz, 1);
    w.optional_member("max_sm_clock_mhz", g.max_sm_clock_mhz, 1);
    w.optional_member("ecc_uncorrected", g.ecc_uncorrected);
    w.optional_member("ecc_corrected", g.ecc_corrected);
    w.optional_member("retired_pages_dbe", g.retired_pages_dbe);
    w.optional_member("retired_pages_pending", g.retired_pages_pending);
    if (!g.pci_bus_id.empty()) w.member("pci_bus_id", g.pci_bus_id);
    auto small = [&w](const char* k, const std::optional<int>& v) {
      if (v) w.member(k, *v);
    };
    small("pcie_gen", g.pcie_gen);
    small("pcie_gen_max", g.pcie_gen_max);
    small("pcie_width", g.pcie_width);
    small("pcie_width_max", g.pcie_width_max);
    w.optional_member("ecc_uncorrected_aggregate", g.ecc_uncorrected_aggregate);
    w.optional_member("ecc_corrected_aggregate", g.ecc_corrected_aggregate);
    w.optional_member("remapped_rows_pending", g.remapped_rows_pending);
    w.optional_member("remapped_rows_failure", g.remapped_rows_failure);
    if (g.throttle) {
      w.key("throttle");
      w.begin_array();
      for (const std::string& r : *g.throttle) w.string(r);
      w.end_array();
    }
    w.optional_member("power_w", g.power_w, 2);
    small("nvlinks_down", g.nvlinks_down);
    w.end_object();
  }
  w.end_array();
}

void write_dcgm(JsonWriter& w, const DcgmDiag& d, int level) {
  w.key("dcgm");
  w.begin_object();
  w.member("level", level);
  w.key("tests");
  w.begin_array();
  for (const DcgmTestResult& t : d.tests) {
    w.begin_object();
    w.member("name", t.name);
    if (t.gpu) w.member("gpu", *t.gpu);
    w.member("result", t.result);
    if (!t.info.empty()) w.member("info", t.info);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

bool is_gpu_flag(const std::string& a) {
  return a == "--expect-gpus" || a == "--dcgm" || a == "--dcgm-level" || a == "--dcgm-timeout-s";
}

// The value of one of the GPU diagnostic flags; false when it is not good.
bool parse_gpu_flag(const std::string& a, const std::string& v, ProbeOptions* o) {
  std::int64_t n = 0;
  if (a == "--expect-gpus") {
    if (!parse_int64(v, 0, 4096, &n)) return false;
    o->expect_gpus = static_cast<int>(n);
  } else if (a == "--dcgm") {
    o->dcgm = v;
    return !v.empty();
  } else if (a == "--dcgm-level") {
    if (!parse_int64(v, 1, 3, &n)) return false;
    o->dcgm_level = static_cast<int>(n);
  } else {
    return parse_seconds(v, 86400, &o->dcgm_timeout_s);
  }
  return true;
}

}  // namespace

bool parse_probe_options(const std::vector<std::string>& args, ProbeOptions* o,
                         std::string* error) {
  o->node.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a != "--node" && a != "--dir" && a != "--io-bytes" && a != "--compute-s" &&
        a != "--nvidia-smi" && a != "--kernel-log" && a != "--min-free-bytes" &&
        a != "--max-gpu-temp" && a != "--nvidia-smi-timeout-s" && !is_gpu_flag(a) &&
        !is_torch_flag(a)) {
      *error = "probe: unexpected argument '" + a + "'";
      return false;
    }
    if (i + 1 >= args.size()) {
      *error = "probe: " + a + " needs a value";
      return false;
    }
    const std::string& v = args[++i];
    bool ok = true;
    if (is_gpu_flag(a)) {
      ok = parse_gpu_flag(a, v, o);
    } else if (is_torch_flag(a)) {
      ok = parse_torch_flag(a, v, &o->torch_python, &o->torch_s);
    } else if (a == "--node") {
      o->node = v;
      ok = !v.empty();
    } else if (a == "--dir") {
      o->dir = v;
      ok = !v.empty();
    } else if (a == "--io-bytes") {
      ok = parse_int64(v, 0, limits::kMaxProbeIoBytes, &o->io_bytes);
    } else if (a == "--compute-s") {
      ok = parse_seconds(v, limits::kMaxProbeComputeS, &o->compute_s);
    } else if (a == "--nvidia-smi") {
      o->nvidia_smi = v;
      ok = !v.empty();
    } else if (a == "--kernel-log") {
      o->kernel_log = v;
      ok = !v.empty();
    } else if (a == "--min-free-bytes") {
      ok = parse_int64(v, 0, 1ll << 60, &o->min_free_bytes);
    } else if (a == "--nvidia-smi-timeout-s") {
      ok = parse_seconds(v, 3600, &o->nvidia_smi_timeout_s) && o->nvidia_smi_timeout_s > 0;
    } else {
      ok = parse_seconds(v, 1000, &o->max_gpu_temp_c);  // degrees, checked like seconds
    }
    if (!ok) {
      *error = "probe: bad value '";
      *error += v + "' for " + a;
      return false;
    }
  }
  if (o->node.empty()) o->node = default_node_name();
  return true;
}

std::string run_probe(const ProbeOptions& o) {
  const std::int64_t at_ms = wall_ms();
  std::vector<Check> checks;

  GpuSection gpu = probe_gpus(o);
  checks.insert(checks.end(), gpu.checks.begin(), gpu.checks.end());
  auto dcgm = probe_dcgm(o);
  if (dcgm) checks.push_back(dcgm->second);

  std::vector<std::string> xid_lines;
  std::string log_error;
  std::optional<std::string> log = read_kernel_log(o.kernel_log, &log_error);
  if (log) {
    xid_lines = find_xid_lines(*log);
    checks.push_back(xid_check(xid_lines));
  } else if (!o.kernel_log.empty()) {
    // A log we were told to read and cannot is a mistake worth seeing; /dev/kmsg that the
    // container or dmesg_restrict hides is not, and leaves the check out.
    checks.push_back(Check{"xid", false, "cannot read the kernel log " + log_error});
  }

  FsProbe fs = probe_filesystem(absolute_dir(o.dir), o.io_bytes);
  for (Check& c : fs_checks(fs, o.min_free_bytes)) checks.push_back(std::move(c));

  std::optional<GemmProbe> gemm;
  if (o.compute_s > 0) {
    gemm = run_cpu_gemm(o.compute_s);
    checks.push_back(compute_check(*gemm));
  }
  std::optional<TorchProbe> torch;
  if (o.torch_python != "none") {
    torch = run_torch_probe(o.torch_python, o.torch_s);
    checks.push_back(torch->check);
  }
  // On GPUs the node's compute figure is the torch probe's median GPU.
  std::optional<double> gpu_tflops =
      torch && torch->reading ? torch_median_gpu_tflops(*torch->reading) : std::nullopt;

  bool all_ok = true;
  for (const Check& c : checks) all_ok = all_ok && c.ok;

  JsonWriter w;
  w.begin_object();
  w.member("probe", kProbeSchemaVersion);
  w.member("node", o.node);
  w.member("hostname", host_name());
  w.member("at_ms", at_ms);
  w.member_bool("ok", all_ok);
  write_checks(w, checks);
  if (gpu_tflops) {
    w.key("compute");
    w.begin_object();
    w.member("kind", "gpu-gemm");
    w.member("gflops", *gpu_tflops * 1000, 3);
    w.end_object();
  } else if (gemm) {
    w.key("compute");
    w.begin_object();
    w.member("kind", "cpu-gemm");
    w.member("gflops", gemm->gflops, 3);
    w.member("n", gemm->n);
    w.member("rounds", gemm->rounds);
    w.end_object();
  }
  w.key("io");
  w.begin_object();
  w.member("dir", fs.dir);
  w.optional_member("write_mb_s", fs.write_mb_s, 1);
  w.optional_member("read_mb_s", fs.read_mb_s, 1);
  w.optional_member("free_bytes", fs.free_bytes);
  w.member("bytes", fs.bytes);
  w.end_object();
  write_gpus(w, gpu.gpus);
  if (gpu.shown) w.member("gpu_count", *gpu.shown);
  if (dcgm) write_dcgm(w, dcgm->first, o.dcgm_level);
  if (torch && torch->reading) write_torch(w, *torch->reading);
  w.key("xid");
  w.begin_array();
  for (const std::string& line : xid_lines) w.string(line);
  w.end_array();
  w.end_object();
  return w.str();
}

int probe_command(const ProbeOptions& options) {
  // The helpers it runs (nvidia-smi, dcgmi, the torch probe) learn the node's name as the site
  // knows it, as a job's processes do (the lab's stand-ins plant faults by it).
  setenv("ORCH_NODE_NAME", options.node.c_str(), 1);
  std::string line = run_probe(options) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace orch::agent
