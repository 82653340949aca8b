// The launch contract: every task of a gang gets its place under orchestrate's names and
// torchrun's, all tasks agree on the rendezvous port, and a place read from srun's variables is
// checked before a task is started with it.
#include <gmock/gmock.h>

#include <map>

#include "scheduler/model/launch_contract.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

TaskPlace place(int node, int nnodes, int per_node, int local) {
  return TaskPlace{node, nnodes, per_node, local, "node-0", 29400};
}

std::map<std::string, std::string> env_of(const TaskPlace& p) {
  auto vars = task_env(p);
  return {vars.begin(), vars.end()};
}

TEST(LaunchContract, ATaskOfAGangSeesItsPlaceUnderBothNames) {
  auto env = env_of(place(2, 3, 4, 1));  // third node of three, second of its four tasks
  EXPECT_EQ(env["ORCH_NODE_RANK"], "2");
  EXPECT_EQ(env["ORCH_NNODES"], "3");
  EXPECT_EQ(env["ORCH_TASK_RANK"], "9");
  EXPECT_EQ(env["ORCH_NTASKS"], "12");
  EXPECT_EQ(env["ORCH_LOCAL_RANK"], "1");
  EXPECT_EQ(env["ORCH_MASTER_ADDR"], "node-0");
  EXPECT_EQ(env["ORCH_MASTER_PORT"], "29400");
  EXPECT_EQ(env["RANK"], "9");
  EXPECT_EQ(env["WORLD_SIZE"], "12");
  EXPECT_EQ(env["LOCAL_RANK"], "1");
  EXPECT_EQ(env["NODE_RANK"], "2");
  EXPECT_EQ(env["MASTER_ADDR"], "node-0");
  EXPECT_EQ(env["MASTER_PORT"], "29400");
  EXPECT_EQ(task_env(place(2, 3, 4, 1)).size(), 13u);
}

TEST(LaunchContract, OneTaskPerNodeDescribesNodesAsTorchrunExpects) {
  auto env = env_of(place(1, 2, 1, 0));
  EXPECT_EQ(env["WORLD_SIZE"], "2");
  EXPECT_EQ(env["RANK"], "1");
  EXPECT_EQ(env["LOCAL_RANK"], "0");
}

TEST(LaunchContract, EveryTaskOfAnAttemptAgreesOnThePortAndAttemptsDiffer) {
  const int port = master_port_for("orch-7-2-5f3a9c");
  EXPECT_EQ(master_port_for("orch-7-2-5f3a9c"), port);
  EXPECT_GE(port, 20000);
  EXPECT_LT(port, 30000);
  int differ = 0;
  for (int i = 0; i < 20; ++i) {
    differ += master_port_for("orch-7-" + std::to_string(i) + "-x") != port ? 1 : 0;
  }
  EXPECT_GE(differ, 18);
}

TEST(LaunchContract, APlaceOutsideItsGangIsRefusedNamingTheField) {
  auto bad_node = check_task_place(place(3, 3, 1, 0));
  ASSERT_FALSE(bad_node.ok());
  EXPECT_THAT(bad_node.error().message, HasSubstr("node_rank is 3, must be 0 to 2"));
  auto bad_local = check_task_place(place(0, 1, 2, 2));
  ASSERT_FALSE(bad_local.ok());
  EXPECT_THAT(bad_local.error().message, HasSubstr("local_rank is 2, must be 0 to 1"));
  TaskPlace no_addr = place(0, 1, 1, 0);
  no_addr.master_addr.clear();
  EXPECT_FALSE(check_task_place(no_addr).ok());
  TaskPlace no_port = place(0, 1, 1, 0);
  no_port.master_port = 70000;
  EXPECT_FALSE(check_task_place(no_port).ok());
  EXPECT_TRUE(check_task_place(place(0, 1, 1, 0)).ok());
}

class FromSlurm : public ::testing::Test {
 protected:
  std::map<std::string, std::string, std::less<>> vars{{"SLURM_NODEID", "1"},
                                                       {"SLURM_NNODES", "3"},
                                                       {"SLURM_LOCALID", "1"},
                                                       {"SLURM_NTASKS", "6"},
                                                       {"SLURM_PROCID", "3"}};
  Result<TaskPlace> read() {
    return task_place_from_slurm(
        [&](std::string_view name) -> std::optional<std::string> {
          auto it = vars.find(name);
          if (it == vars.end()) return std::nullopt;
          return it->second;
        },
        "lab-a-n0", 23456);
  }
};

TEST_F(FromSlurm, SrunsVariablesGiveTheTasksPlace) {
  auto p = read();
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->node_rank, 1);
  EXPECT_EQ(p->nnodes, 3);
  EXPECT_EQ(p->tasks_per_node, 2);
  EXPECT_EQ(p->local_rank, 1);
  EXPECT_EQ(task_rank(*p), 3);
  EXPECT_EQ(p->master_addr, "lab-a-n0");
  EXPECT_EQ(p->master_port, 23456);
}

TEST_F(FromSlurm, AMissingOrGarbledVariableIsNamed) {
  vars.erase("SLURM_LOCALID");
  auto missing = read();
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("SLURM_LOCALID is not set"));
  vars["SLURM_LOCALID"] = "1x";
  auto garbled = read();
  ASSERT_FALSE(garbled.ok());
  EXPECT_THAT(garbled.error().message, HasSubstr("SLURM_LOCALID is \"1x\", not a whole number"));
}

TEST_F(FromSlurm, UnevenOrCyclicPlacementIsRefused) {
  vars["SLURM_NTASKS"] = "5";
  auto uneven = read();
  ASSERT_FALSE(uneven.ok());
  EXPECT_THAT(uneven.error().message, HasSubstr("not a multiple of SLURM_NNODES 3"));
  vars["SLURM_NTASKS"] = "6";
  vars["SLURM_PROCID"] = "4";  // cyclic distribution: rank 4 would be on node 1 local 1
  auto cyclic = read();
  ASSERT_FALSE(cyclic.ok());
  EXPECT_THAT(cyclic.error().message, HasSubstr("--distribution=block"));
}

}  // namespace
}  // namespace orch
