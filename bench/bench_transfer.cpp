// Issue 5's replication throughput on the real Slurm lab (tests/lab/slurm): a directory of N MB
// copied from alpha's storage to beta's by RsyncTransferPort on its pull route (rsync on beta's
// login node pulling from alpha's, uncapped, watched: progress parsed, cap and stop polled)
// against the baseline, plain `rsync -a` run the way a person would on the same path: ssh to
// beta's login node, rsync there pulling from alpha over ssh with the lab's key. Both in the same
// run, alternating which goes first, the destination emptied before every copy, every copy
// compared byte for byte with the source.
//
//   build/bin/bench_transfer [--mb N] [--repeat R]      (defaults: 512 MB, 3)
//
// Runs as root (the lab does). The lab is torn down on the way out; SIGINT/SIGTERM stop the
// transfer in flight and end the bench after it.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/transfer/rsync_transfer.h"
#include "bench/bench_util.h"
#include "testkit/slurm_lab.h"

using namespace orch::bench;  // NOLINT: a benchmark's main file

namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};
void on_signal(int) {
  g_stop = true;
}

constexpr std::size_t kFile = 32'000'000;  // the data set's files: 32 MB each, the last smaller

struct Options {
  double mb = 512;
  int repeat = 3;
};

// The data set: files of random bytes (incompressible), `bytes` in all.
void make_dataset(const std::string& dir, std::uint64_t bytes) {
  fs::create_directories(dir);
  std::mt19937_64 rng(5);
  std::string buf;
  for (int f = 0; bytes > 0; ++f) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes, kFile));
    buf.resize(n);
    for (std::size_t i = 0; i < n; i += 8) {
      const std::uint64_t v = rng();
      std::memcpy(&buf[i], &v, std::min<std::size_t>(8, n - i));
    }
    char name[32];
    std::snprintf(name, sizeof name, "/shard-%03d.bin", f);
    std::ofstream(dir + name, std::ios::binary) << buf;
    bytes -= n;
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether dst holds exactly src's files with src's bytes.
bool same_tree(const std::string& src, const std::string& dst) {
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(src)) {
    const fs::path other = fs::path(dst) / e.path().filename();
    if (!fs::exists(other) || read_file(e.path()) != read_file(other)) return false;
    ++files;
  }
  std::size_t copied = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dst)) ++copied;
  return files == copied;
}

class Uncapped : public orch::TransferControl {
 public:
  void progress(const orch::TransferProgress&) override {}
  double cap_bytes_per_s() override { return 0; }
  bool stop_requested() override { return g_stop; }
};

// The baseline's command on beta's login node: what a person types there.
std::string plain_rsync_command(const orch::test::LabCluster& alpha, const std::string& src,
                                const std::string& dst) {
  return "mkdir -p " + dst + " && rsync -a -e 'ssh -F /dev/null -p " +
         std::to_string(alpha.ssh_port) + " -i " + alpha.key_file +
         " -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=yes"
         " -o UserKnownHostsFile=" +
         alpha.known_hosts + "' " + alpha.user + "@" + alpha.host + ":" + src + "/ " + dst + "/";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (auto rc = parse_flags(argc, argv, "bench_transfer",
                            "Checkpoint transfer between the Slurm lab's sites (tests/lab/slurm) "
                            "against plain rsync.",
                            {{"--mb", "N", "MB (10^6 bytes) of random data (default 512)", 1,
                              100000, false, [&](double v) { o.mb = v; }},
                             {"--repeat", "R", "runs of each method (default 3)", 1, 100, true,
                              [&](double v) { o.repeat = static_cast<int>(v); }}})) {
    return *rc;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::printf(
      "bench_transfer on the real Slurm lab (tests/lab/slurm); %ld CPUs, load %.2f at "
      "start\n",
      sysconf(_SC_NPROCESSORS_ONLN), load_average());
  std::fflush(stdout);
  auto started = orch::test::SlurmLab::start({"alpha", "beta"});
  if (!started) {
    std::fprintf(stderr, "bench_transfer: the lab did not come up: %s\n",
                 started.error().message.c_str());
    return 1;
  }
  std::unique_ptr<orch::test::SlurmLab> lab = std::move(started).value();
  const auto& alpha = lab->cluster("alpha");
  const auto bytes = static_cast<std::uint64_t>(o.mb * 1e6);
  const std::string src = alpha.storage_root + "/dataset";
  const std::string dst = lab->cluster("beta").storage_root + "/replicas/dataset";
  make_dataset(src, bytes);

  orch::ClusterSpec alpha_spec = lab->cluster_spec("alpha");
  orch::ClusterSpec beta_spec = lab->cluster_spec("beta");
  beta_spec.data.pull_from["alpha"] =
      orch::PeerSpec{alpha.host, alpha.ssh_port, alpha.user, alpha.key_file, alpha.known_hosts};
  orch::RsyncTransferPort port({alpha_spec, beta_spec}, lab->dir() + "/transfer-work");
  orch::TransferRequest request;
  request.id = 1;
  request.from = {"alpha", src};
  request.to = {"beta", dst};
  request.directory = true;
  request.bytes_hint = bytes;

  std::printf("data set: %.0f MB in %zu files on alpha; copied to beta %d times by each method\n\n",
              o.mb, static_cast<std::size_t>((bytes + kFile - 1) / kFile), o.repeat);
  std::printf("%-4s %-44s %8s %8s\n", "run", "method", "s", "MB/s");
  std::vector<double> ours, plain;
  int rc = 0;
  for (int rep = 0; rep < o.repeat && !g_stop && rc == 0; ++rep) {
    for (int k = 0; k < 2 && !g_stop && rc == 0; ++k) {
      const bool run_ours = (rep % 2 == 0) == (k == 0);  // alternate which goes first
      fs::remove_all(dst);
      const auto t0 = SteadyClock::now();
      std::string failure;
      if (run_ours) {
        Uncapped control;
        auto outcome = port.run(request, control);
        if (!outcome) failure = outcome.error().message;
      } else {
        auto r =
            orch::test::run_lab_command(lab->ssh_argv("beta", plain_rsync_command(alpha, src, dst)),
                                        {}, std::chrono::seconds(1800));
        if (r.exit_code != 0)
          failure = "plain rsync exited " + std::to_string(r.exit_code) + ": " + r.err;
      }
      const double s = seconds_since(t0);
      if (failure.empty() && !same_tree(src, dst)) failure = "the copy differs from the source";
      if (!failure.empty()) {
        std::fprintf(stderr, "bench_transfer: %s\n", failure.c_str());
        rc = 1;
        break;
      }
      const double rate = static_cast<double>(bytes) / 1e6 / s;
      (run_ours ? ours : plain).push_back(rate);
      std::printf("%-4d %-44s %8.2f %8.1f\n", rep + 1,
                  run_ours ? "RsyncTransferPort, pull via beta login node"
                           : "plain rsync -a on beta's login node",
                  s, rate);
      std::fflush(stdout);
    }
  }
  if (rc == 0 && !g_stop) {
    const double base = median(plain);
    std::printf("\n| method | runs | median MB/s | min | max | vs plain rsync |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto* v : {&plain, &ours}) {
      std::vector<double> sorted = *v;
      std::sort(sorted.begin(), sorted.end());
      std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.2fx |\n",
                  v == &plain ? "plain `rsync -a` on beta's login node (baseline)"
                              : "RsyncTransferPort, pull via beta login node",
                  v->size(), median(*v), sorted.front(), sorted.back(), median(*v) / base);
    }
    std::printf("\nRsyncTransferPort at %.0f%% of plain rsync (goal >= 90%%)\n",
                100 * median(ours) / base);
  }
  std::printf("load %.2f at the end%s\n", load_average(), g_stop ? " (interrupted)" : "");
  return g_stop ? 130 : rc;
}
