// Issue 20's copy path: a checkpoint directory copied out of a Kubernetes site's volume as a tar
// stream through pods/exec (KubernetesSite::copy_out, over TLS and WebSocket to the fake API
// server in this process), against `tar -c | tar -x` of the same files on this machine, the
// cost floor of the tar format. Both read the same page-cached files; alternating runs, median
// of each, in the same run. Then issue 44's resumption: a copy whose exec stream the fake cuts
// at --break-at percent of its bytes, and the bytes the retry sends again (counted by
// copy_out, as the transfer worker retries: complete files compared by SHA-256).
//
//   bench_kube_copy [--mib N] [--runs N] [--break-at P]
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "adapters/kubernetes/kube_config.h"
#include "adapters/kubernetes/kube_site.h"
#include "bench/bench_util.h"
#include "testkit/fake_kube/fake_kube_server.h"
#include "testkit/fake_kube/kube_test_client.h"
#include "testkit/fake_kube/pod_volumes.h"
#include "testkit/fake_kube/test_pki.h"

using namespace orch::bench;  // NOLINT: a benchmark's main file
namespace fs = std::filesystem;

namespace {

struct NoControl : orch::TransferControl {
  void progress(const orch::TransferProgress&) override {}
  double cap_bytes_per_s() override { return 0; }
  bool stop_requested() override { return false; }
};

}  // namespace

int main(int argc, char** argv) {
  int mib = 256;
  int runs = 3;
  int break_at = 50;
  if (auto code = parse_flags(
          argc, argv, "bench_kube_copy",
          "A checkpoint copied out of a Kubernetes site (fake API server) through pods/exec, "
          "against tar | tar here.",
          {{"--mib", "N", "size of the checkpoint in MiB, 8 files (default 256)", 8, 65536, true,
            [&](double v) { mib = static_cast<int>(v); }},
           {"--runs", "N", "runs of each, alternating (default 3)", 1, 100, true,
            [&](double v) { runs = static_cast<int>(v); }},
           {"--break-at", "P", "where the resumed copy breaks, percent of its bytes (default 50)",
            1, 99, true, [&](double v) { break_at = static_cast<int>(v); }}})) {
    return *code;
  }
  std::string tmpl = (fs::temp_directory_path() / "bench-kube-copy-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return 1;
  const std::string dir = tmpl;
  const auto pki = orch::fake_kube::make_test_pki(dir + "/pki");
  const std::string token = orch::fake_kube::random_token();
  orch::fake_kube::FakeKubeOptions o;
  o.cert_file = pki.server_cert;
  o.key_file = pki.server_key;
  o.token = token;
  o.cluster.state_dir = dir + "/fake";
  orch::fake_kube::FakeKubeServer server(o);
  server.start();
  orch::fake_kube::write_kubeconfig(dir + "/kubeconfig", {server.url(), pki.ca_cert, token});

  // The checkpoint: 8 files of mib/8 MiB on the claim.
  const std::string claim = orch::fake_kube::claim_dir(dir + "/fake", "default", "ckpt");
  const std::string source = claim + "/job/step-100";
  fs::create_directories(source);
  std::string block(1 << 20, '\0');
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>((i * 131) % 251);
  for (int f = 0; f < 8; ++f) {
    std::ofstream out(source + "/shard-" + std::to_string(f), std::ios::binary);
    for (int m = 0; m < mib / 8; ++m)
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  const double bytes = static_cast<double>(mib) * (1 << 20);

  orch::ClusterSpec spec;
  spec.name = "kube";
  spec.provider = "kubernetes";
  spec.kubernetes.pod.image = "fake/helper";
  const std::string mount = dir + "/mnt/ckpt";
  spec.kubernetes.pod.volumes = {{"ckpt", "ckpt", "", mount, false}};
  auto target = orch::load_kube_target(dir + "/kubeconfig", "", "");
  if (!target) return 1;
  orch::KubernetesSite site(spec, *target);

  std::vector<double> exec_s;
  std::vector<double> local_s;
  for (int r = 0; r < runs; ++r) {
    const std::string out_a = dir + "/out-exec-" + std::to_string(r);
    orch::TransferRequest req;
    req.id = r + 1;
    req.from = {"kube", mount + "/job/step-100"};
    req.to = {"here", out_a};
    req.directory = true;
    req.bytes_hint = static_cast<std::uint64_t>(bytes);
    NoControl control;
    auto t0 = SteadyClock::now();
    auto done = site.copy_out(req, out_a, control);
    if (!done) {
      std::fprintf(stderr, "copy_out: %s\n", done.error().message.c_str());
      return 1;
    }
    exec_s.push_back(seconds_since(t0));
    const std::string out_b = dir + "/out-local-" + std::to_string(r);
    fs::create_directories(out_b);
    std::string cmd = "tar -c -f - -C '" + source;
    cmd += "' . | tar -x -f - -C '" + out_b + "'";
    t0 = SteadyClock::now();
    if (std::system(cmd.c_str()) != 0) return 1;
    local_s.push_back(seconds_since(t0));
    fs::remove_all(out_a);
    fs::remove_all(out_b);
  }
  const double e = median(exec_s);
  const double l = median(local_s);
  std::printf("Kubernetes copy out, %d MiB in 8 files, median of %d runs (load %.2f)\n", mib, runs,
              load_average());
  std::printf("%-40s %8s %8s %8s\n", "route", "s", "MB/s", "vs tar|tar");
  std::printf("%-40s %8.2f %8.1f %8.2f\n", "tar | tar on this machine (floor)", l, bytes / l / 1e6,
              1.0);
  std::printf("%-40s %8.2f %8.1f %8.2f\n", "copy_out: tar through pods/exec (TLS, WS)", e,
              bytes / e / 1e6, l / e);

  // A copy broken for real (the fake cuts the exec stream after break_at% of the bytes), then
  // resumed.
  orch::TransferRequest req;
  req.id = runs + 1;
  req.from = {"kube", mount + "/job/step-100"};
  req.to = {"here", dir + "/out-resumed"};
  req.directory = true;
  req.bytes_hint = static_cast<std::uint64_t>(bytes);
  const auto cut = static_cast<std::uint64_t>(bytes * break_at / 100);
  const auto hook =
      orch::fake_kube::kube_request({"127.0.0.1", server.port(), pki.ca_cert, token}, "POST",
                                    "/fake/exec/cut?afterBytes=" + std::to_string(cut));
  NoControl control;
  auto broken = site.copy_out(req, req.to.path, control);
  if (hook.status != 200 || broken) {
    std::fprintf(stderr, "the copy did not break (hook: HTTP %d)\n", hook.status);
    return 1;
  }
  req.checksum = true;
  auto t0 = SteadyClock::now();
  auto resumed = site.copy_out(req, req.to.path, control);
  const double resume_s = seconds_since(t0);
  if (!resumed) {
    std::fprintf(stderr, "resumed copy_out: %s\n", resumed.error().message.c_str());
    return 1;
  }
  std::printf(
      "\nbroken after %d%% of the bytes (%.1f MiB, the exec stream cut by the fake), "
      "then resumed:\n",
      break_at, static_cast<double>(cut) / (1 << 20));
  std::printf("%-40s %8.2f s, %.1f MiB sent again = %.1f%% of %d MiB\n", "resumed copy_out",
              resume_s, static_cast<double>(resumed->bytes) / (1 << 20),
              100.0 * static_cast<double>(resumed->bytes) / bytes, mib);
  server.stop();
  fs::remove_all(dir);
  return 0;
}
