#include "bench/slurm_throughput.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "adapters/slurm/agent_binary.h"
#include "adapters/slurm/batch_script.h"
#include "adapters/slurm/probe_command.h"
#include "adapters/slurm/slurm_parse.h"
#include "adapters/slurm/slurm_site.h"
#include "adapters/ssh/shell_quote.h"
#include "adapters/ssh/ssh_session.h"
#include "bench/bench_util.h"
#include "bench/slurm_lab_util.h"
#include "testkit/slurm_lab.h"

namespace orch::bench {

namespace {

using std::chrono::milliseconds;

struct Series {
  std::vector<double> ms;  // per successful call
  int failures = 0;
  std::string first_error;
  void fail(const std::string& why) {
    if (failures++ == 0) first_error = first_line(why);
  }
  double per_second() const {
    return ms.empty() ? 0 : 1000.0 * static_cast<double>(ms.size()) / sum(ms);
  }
};

template <typename Body>
void timed(Series& s, Body body) {
  auto t = SteadyClock::now();
  std::string error;
  bool ok = body(error);
  double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t).count();
  if (ok) {
    s.ms.push_back(ms);
  } else {
    s.fail(error);
  }
}

void print_series_table(const char* unit, const std::vector<std::pair<std::string, Series*>>& rows,
                        const Series& baseline) {
  std::printf("%-62s %9s %8s %8s %9s\n", "", unit, "med ms", "max ms", "vs base");
  for (const auto& [name, s] : rows) {
    std::printf("%-62s %9.1f %8.1f %8.1f %8.2fx", name.c_str(), s->per_second(), median(s->ms),
                max_of(s->ms),
                baseline.per_second() > 0 ? s->per_second() / baseline.per_second() : 0);
    if (s->failures) std::printf("  (%d failed: %s)", s->failures, s->first_error.c_str());
    std::printf("\n");
  }
  std::fflush(stdout);
}

LaunchRequest tiny_request(const std::string& token, int i, const std::string& command) {
  LaunchRequest req;
  req.token = token;
  req.job_id = i;
  req.attempt_no = 1;
  req.job_name = "bench";
  req.command = command;
  req.nodes = 1;
  req.gpus_per_node = 1;
  return req;
}

// The Slurm job id in sbatch --parsable's "ID" or "ID;CLUSTER".
std::string parsable_id(const std::string& out) {
  std::string line = first_line(out);
  return line.substr(0, line.find(';'));
}

void scancel_all(const test::SlurmLab& lab, const std::vector<std::string>& ids) {
  for (std::size_t i = 0; i < ids.size(); i += 50) {
    std::vector<std::string> argv = {"scancel"};
    for (std::size_t k = i; k < std::min(ids.size(), i + 50); ++k) argv.push_back(ids[k]);
    if (auto r = lab.slurm("alpha", argv); !r) {
      std::cerr << "  scancel: " << first_line(r.error().message) << "\n";
    }
  }
}

}  // namespace

void bench_throughput(int launches, int polls) {
  const auto budget = milliseconds(180000);  // per measurement, whatever N is
  auto lab = start_lab({"alpha"});
  const ClusterSpec spec = (*lab)->cluster_spec("alpha");
  SlurmSite site(spec, std::make_unique<SshSession>(spec.name, spec.ssh));
  // One connection, opened before timing: a server keeps it for as long as it runs.
  auto t_connect = SteadyClock::now();
  auto warm = site.ssh().exec("true");
  if (!warm) throw std::runtime_error("ssh to alpha: " + warm.error().message);
  const double connect_ms =
      std::chrono::duration<double, std::milli>(SteadyClock::now() - t_connect).count();
  const std::string tag = std::to_string(getpid());
  // The naive launches run their tasks under the same agent the site ships (the first session
  // launch uploads it; the naive way only measures the submission).
  auto agent = slurm::read_agent_binary(slurm::default_agent_path());
  if (!agent) throw std::runtime_error(agent.error().message);
  const std::string remote_agent = slurm::remote_agent_path(spec.storage_root, agent->id);

  if (launches > 0 && !stopping()) {
    std::printf("\n== 2. launches per second through sbatch (N=%d each, interleaved) ==\n",
                launches);
    Series naive, session;
    std::vector<std::string> ids;
    const auto end = SteadyClock::now() + budget;
    for (int i = 0; i < launches && !stopping() && SteadyClock::now() < end; ++i) {
      // The naive way: one new ssh process doing what launch does, in one remote command.
      timed(naive, [&](std::string& error) {
        auto plan = slurm::make_batch_plan(
            tiny_request("bench-naive-" + tag + "-" + std::to_string(i), i, "true"), spec,
            remote_agent);
        if (!plan) {
          error = plan.error().message;
          return false;
        }
        const std::string script = shell_quote(plan->paths.script).value();
        std::string command = plan->prepare_command;
        command += " && cat > " + script;
        command += " && chmod 0755 " + script;
        command += " && " + plan->submit_command;
        test::LabCommand c = (*lab)->ssh("alpha", command, plan->script);
        if (c.exit_code != 0) {
          error = c.err.empty() ? c.out : c.err;
          return false;
        }
        ids.push_back(parsable_id(c.out));
        return true;
      });
      timed(session, [&](std::string& error) {
        auto r =
            site.launch(tiny_request("bench-site-" + tag + "-" + std::to_string(i), i, "true"));
        if (!r) {
          error = r.error().message;
          return false;
        }
        ids.push_back(r->site_job_id);
        return true;
      });
    }
    print_series_table("launch/s",
                       {{"baseline: new `ssh` process per launch (mkdir; cat >; sbatch)", &naive},
                        {"SlurmSite::launch, one SSH connection (mkdir; SFTP; sbatch)", &session}},
                       naive);
    scancel_all(**lab, ids);
    std::printf("(connection set up once before timing: %.0f ms; %zu Slurm jobs cancelled after)\n",
                connect_ms, ids.size());
  }

  if (polls > 0 && !stopping()) {
    std::printf("\n== 3. squeue polls per second on one running job (N=%d each, interleaved) ==\n",
                polls);
    const std::string token = "bench-observe-" + tag;
    auto launched = site.launch(tiny_request(token, 0, "sleep 600"));
    if (!launched)
      throw std::runtime_error("launching the job to poll: " + launched.error().message);
    const bool running = wait_for(
        [&] {
          auto o = site.observe(token, 0);
          return o && o->phase == RunPhase::running;
        },
        milliseconds(60000), milliseconds(200));
    if (!running) {
      scancel_all(**lab, {launched->site_job_id});
      throw std::runtime_error("the job to poll did not start within 60 s");
    }
    const std::string squeue = shell_command(slurm::squeue_by_name_argv(token)).value();
    Series naive, channel, exec, observe;
    const auto end = SteadyClock::now() + budget;
    for (int i = 0; i < polls && !stopping() && SteadyClock::now() < end; ++i) {
      timed(naive, [&](std::string& error) {
        test::LabCommand c = (*lab)->ssh("alpha", squeue);
        if (c.exit_code != 0 || c.out.empty()) {
          error = c.err + c.out;
          return false;
        }
        return true;
      });
      timed(channel, [&](std::string& error) {
        auto r = site.ssh().exec("true");
        if (!r || r->exit_status != 0) {
          error = r ? r->err : r.error().message;
          return false;
        }
        return true;
      });
      timed(exec, [&](std::string& error) {
        auto r = site.ssh().exec(squeue);
        if (!r || r->exit_status != 0 || r->out.empty()) {
          error = r ? r->err + r->out : r.error().message;
          return false;
        }
        return true;
      });
      timed(observe, [&](std::string& error) {
        auto r = site.observe(token, 0);
        if (!r || r->phase != RunPhase::running) {
          error = r ? "not running" : r.error().message;
          return false;
        }
        return true;
      });
    }
    print_series_table("polls/s",
                       {{"baseline: new `ssh` process per `squeue --name`", &naive},
                        {"SshSession::exec(\"true\"): one channel, no Slurm (floor)", &channel},
                        {"SshSession::exec(squeue), one connection", &exec},
                        {"SlurmSite::observe (squeue + SFTP read of output.log)", &observe}},
                       naive);
    scancel_all(**lab, {launched->site_job_id});
    std::printf("(squeue command: %s)\n", squeue.c_str());
  }
  std::fflush(stdout);
}

}  // namespace orch::bench
