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
#include "agents/fs_probe.h"
#include "agents/gemm_probe.h"
#include "agents/json_writer.h"
#include "agents/node_name.h"
#include "agents/nvidia_smi.h"
#include "agents/subprocess.h"
#include "agents/xid_log.h"
#include "scheduler/model/launch_limits.h"

namespace orch::agent {
namespace {

constexpr int kProbeSchemaVersion = 1;

struct GpuSection {
  std::vector<GpuReading> gpus;
  std::vector<Check> checks;  // empty when there is no nvidia-smi to ask
};

// The directory as an absolute path for the report ("." says nothing to whoever reads it).
std::string absolute_dir(const std::string& dir) {
  char buf[PATH_MAX];
  return realpath(dir.c_str(), buf) ? std::string(buf) : dir;
}

GpuSection probe_gpus(const ProbeOptions& o) {
  GpuSection s;
  if (o.nvidia_smi == "none") return s;
  std::string program = o.nvidia_smi.empty() ? find_in_path("nvidia-smi") : o.nvidia_smi;
  if (program.empty()) return s;  // no NVIDIA driver here: a CPU node, nothing to check

  Check smi{"nvidia-smi", true, ""};
  std::vector<std::string> argv = {program};
  for (std::string& a : nvidia_smi_arguments()) argv.push_back(std::move(a));
  CapturedRun run = run_captured(argv, o.nvidia_smi_timeout_s);
  NvidiaSmiParse parsed = parse_nvidia_smi_csv(run.out);
  s.gpus = parsed.gpus;
  auto first_line = [](const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    return line.substr(0, 300);
  };
  if (!run.started) {
    smi.ok = false;
    smi.detail = run.error;
  } else if (run.timed_out) {
    smi.ok = false;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", o.nvidia_smi_timeout_s);
    smi.detail = program + " did not answer within " + limit + " s (killed)";
  } else if (run.exit_code != 0) {
    smi.ok = false;
    // Its reason is on stderr, or among the rows ("Unable to determine the device handle...").
    std::string why = !run.err.empty()            ? first_line(run.err)
                      : !parsed.bad_lines.empty() ? parsed.bad_lines.front()
                                                  : first_line(run.out);
    smi.detail = program + " failed (" +
                 (run.signal ? "signal " + std::to_string(run.signal)
                             : "exit " + std::to_string(run.exit_code)) +
                 ")" + (why.empty() ? "" : ": " + why);
  } else if (!parsed.bad_lines.empty()) {
    smi.ok = false;
    smi.detail = "unexpected nvidia-smi output: " + parsed.bad_lines.front();
  } else if (parsed.gpus.empty()) {
    smi.ok = false;
    smi.detail = "nvidia-smi lists no GPU";
  } else {
    smi.detail = std::to_string(parsed.gpus.size()) + " GPUs: " + parsed.gpus.front().name;
  }
  s.checks.push_back(smi);
  if (!s.gpus.empty()) {
    for (Check& c : gpu_checks(s.gpus, o.max_gpu_temp_c)) s.checks.push_back(std::move(c));
  }
  return s;
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
    w.end_object();
  }
  w.end_array();
}

}  // namespace

bool parse_probe_options(const std::vector<std::string>& args, ProbeOptions* o,
                         std::string* error) {
  o->node.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a != "--node" && a != "--dir" && a != "--io-bytes" && a != "--compute-s" &&
        a != "--nvidia-smi" && a != "--kernel-log" && a != "--min-free-bytes" &&
        a != "--max-gpu-temp" && a != "--nvidia-smi-timeout-s") {
      *error = "probe: unexpected argument '" + a + "'";
      return false;
    }
    if (i + 1 >= args.size()) {
      *error = "probe: " + a + " needs a value";
      return false;
    }
    const std::string& v = args[++i];
    bool ok = true;
    if (a == "--node") {
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
  if (gemm) {
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
  w.key("xid");
  w.begin_array();
  for (const std::string& line : xid_lines) w.string(line);
  w.end_array();
  w.end_object();
  return w.str();
}

int probe_command(const ProbeOptions& options) {
  std::string line = run_probe(options) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace orch::agent
