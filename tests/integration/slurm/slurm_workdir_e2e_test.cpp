// Issue 40's first acceptance line on real Slurm: a PyTorch job written as a user would, with its
// code as `workdir:` (a small Python package, packed and uploaded by `orchestrate job submit`),
// `setup:` that makes a venv in the workdir, `shell: bash` and `source .venv/bin/activate &&
// exec python -m mypkg.train`, on a 2-node gang (gloo all-reduce every step). One of its nodes
// dies; the job resumes from its checkpoint on the survivors and a third node, without running
// the setup again (the setup's own count, on the cluster's shared filesystem) and without
// sending the code again (the server's transfer records: one copy of the archive to alpha).
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>

#include "slurm_fixture.h"

namespace orch::e2e {
namespace {

namespace fs = std::filesystem;

// The user's trainer: torch.distributed over gloo from the launch contract's variables, a
// checkpoint every 10 steps under $ORCH_CHECKPOINT_DIR (atomically), resumed from
// $ORCH_RESUME_FROM, progress and checkpoint lines from rank 0 (docs/getting-started.md).
constexpr const char* kTrain = R"(import json, os, sys, time
import torch
import torch.distributed as dist


def tell(**fields):
    print("@orchestrate " + json.dumps(fields), flush=True)


def main():
    steps = int(sys.argv[1])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    start = 0
    resume = os.environ.get("ORCH_RESUME_FROM")
    if resume:
        state = torch.load(resume)
        model.load_state_dict(state["model"])
        start = state["step"] + 1
        if rank == 0:
            print(f"resumed from step {state['step']}", flush=True)
    ckpt_dir = os.environ["ORCH_CHECKPOINT_DIR"]
    for step in range(start, steps):
        x = torch.randn(32, 16)
        loss = ((model(x) - x.sum(dim=1, keepdim=True)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        opt.step()
        time.sleep(0.05)
        if rank == 0:
            tell(event="progress", step=step, tokens=32 * dist.get_world_size(), loss=loss.item())
            if step % 10 == 0:
                path = os.path.join(ckpt_dir, f"step-{step}.pt")
                torch.save({"model": model.state_dict(), "step": step}, path + ".tmp")
                os.replace(path + ".tmp", path)
                tell(event="checkpoint", step=step, path=path)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
)";

constexpr double kHeartbeatTimeoutS = 6;

class SlurmWorkdirE2eTest : public SlurmE2eTest {
 protected:
  int nodes_per_cluster() const override { return 3; }
  int slurmd_timeout_s() const override { return 300; }

  // The user's project: mypkg/, a .orchignore, and the job file beside them.
  std::string write_project() {
    const std::string root = dir_->path() + "/project";
    fs::create_directories(root + "/mypkg");
    fs::create_directories(root + "/data");
    write_file(root + "/mypkg/__init__.py", "");
    write_file(root + "/mypkg/train.py", kTrain);
    write_file(root + "/data/big.bin", std::string(1 << 20, 'x'));  // left out by .orchignore
    write_file(root + "/.orchignore", "data/\n");
    write_file(root + "/job.yaml",
               "name: mypkg\n"
               "workdir: .\n"
               "setup: |\n"
               "  echo run >> setup_runs\n"
               "  /usr/bin/python3 -m venv --system-site-packages .venv\n"
               "shell: bash\n"
               "command: source .venv/bin/activate && exec python -m mypkg.train 300\n"
               "resources: {nodes: 2, gpus_per_node: 2}\n"
               "model: {parameters: 17}\n"
               "checkpoint: {interval_steps: 10}\n"
               "health: {heartbeat_timeout_s: " +
                   std::to_string(kHeartbeatTimeoutS) +
                   "}\n"
                   "placement: {allowed: [alpha]}\n"
                   "restart: {max_infra_restarts: 3, backoff: {initial_s: 0.1, max_s: 1}}\n");
    return root;
  }
};

TEST_F(SlurmWorkdirE2eTest, AWorkdirJobWithSetupResumesAfterANodeDiesWithoutSettingUpAgain) {
  const std::string project = write_project();
  const std::int64_t id = submit_file(project + "/job.yaml");
  ASSERT_GT(id, 0);
  json before = wait_job(
      id,
      [](const json& j) {
        return j["state"] == "running" && j["step"].is_number() && j["step"].get<int>() >= 30 &&
               !j["last_checkpoint"].is_null();
      },
      "run past step 30 with a checkpoint");
  ASSERT_FALSE(before.is_null()) << describe_job(url_, id);
  json first = attempts(id).at(0);
  ASSERT_EQ(node_set(first).size(), 2u) << first.dump();

  // The code is on alpha's shared filesystem, extracted once, the venv made in it by the setup.
  json spec = job(id)["spec"];
  const std::string hash = spec["workdir"]["sha256"].get<std::string>();
  const std::string tree = lab_->cluster("alpha").storage_root + "/code/" + hash;
  EXPECT_TRUE(fs::exists(tree + "/mypkg/train.py"));
  EXPECT_FALSE(fs::exists(tree + "/data")) << ".orchignore left data/ out";
  EXPECT_TRUE(fs::exists(tree + "/.venv/bin/activate"));
  EXPECT_EQ(read_file(tree + "/setup_runs"), "run\n");
  EXPECT_EQ(code_copies_to("alpha"), 1);

  const std::string victim = *node_set(first).rbegin();
  ASSERT_TRUE(lab_->kill_node("alpha", victim).ok());
  json list = succeeded_attempts(id);
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["cause"], "node_lost") << list[0].dump();
  EXPECT_EQ(node_set(list[1]).count(victim), 0u) << list[1].dump();
  ASSERT_FALSE(list[1]["resumed_from"].is_null()) << list.dump();
  EXPECT_GE(list[1]["resumed_from"]["step"].get<int>(), 30) << list[1].dump();
  EXPECT_EQ(list[1]["last_step"], 299);

  // Neither the setup nor the code's copy ran again for the second attempt.
  EXPECT_EQ(read_file(tree + "/setup_runs"), "run\n");
  EXPECT_EQ(code_copies_to("alpha"), 1);
}

}  // namespace
}  // namespace orch::e2e
