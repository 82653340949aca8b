// Who may ask for what (scheduler/spec/submission_rules.h): a user's team must be one its token
// is bound to, and its priority one its team may use; operators and admins act for any team.
// Also the clusters file's forms that say so: classes for some teams, a team's max_priority,
// and the `secrets:` section.
#include <gmock/gmock.h>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/spec_position.h"
#include "scheduler/spec/submission_rules.h"

namespace orch {
namespace {

using ::testing::HasSubstr;

constexpr const char* kClusters =
    "clusters:\n  - {name: alpha, provider: local, nodes: 1, gpus_per_node: 8}\n";

SchedulingSpec scheduling(const std::string& yaml) {
  auto file = parse_clusters_file(std::string(kClusters) + yaml, "clusters.yaml");
  EXPECT_TRUE(file.ok()) << file.error().message;
  return file.ok() ? file->scheduling : SchedulingSpec{};
}

std::string error(const std::string& yaml) {
  auto r = parse_clusters_file(std::string(kClusters) + yaml, "clusters.yaml");
  return r.ok() ? std::string("(accepted)") : r.error().message;
}

Submitter user(std::vector<std::string> teams) {
  return Submitter{"alice", false, std::move(teams)};
}

JobSpec job(const std::string& team, const std::string& priority_class, int priority = 0) {
  JobSpec s;
  s.team = team;
  s.priority_class = priority_class;
  s.priority = priority;
  return s;
}

TEST(BindTeam, AUsersJobWithoutATeamRunsForItsFirstTeam) {
  JobSpec s;
  ASSERT_TRUE(bind_team(s, user({"vision", "nlp"})).ok());
  EXPECT_EQ(s.team, "vision");
  JobSpec named = job("nlp", "");
  ASSERT_TRUE(bind_team(named, user({"vision", "nlp"})).ok());
  EXPECT_EQ(named.team, "nlp");
}

TEST(BindTeam, AUserCannotSubmitForAnotherTeamAndIsToldWhichItMay) {
  JobSpec s = job("nlp", "");
  auto r = bind_team(s, user({"vision"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::forbidden);
  EXPECT_THAT(r.error().message,
              HasSubstr("alice may not submit for team nlp; alice may submit for vision"));
  JobSpec unbound = job("nlp", "");
  EXPECT_THAT(bind_team(unbound, user({})).error().message,
              HasSubstr("alice is bound to no team and may submit only jobs without one"));
}

TEST(BindTeam, OperatorsAndAdminsActForAnyTeam) {
  JobSpec s = job("nlp", "");
  EXPECT_TRUE(bind_team(s, Submitter{"olga", true, {}}).ok());
  EXPECT_EQ(s.team, "nlp");
}

TEST(CheckPriority, AClassForSomeTeamsIsRefusedToTheOthersWithTheClassesTheyMayUse) {
  const SchedulingSpec s = scheduling(
      "priority_classes: {hero: {value: 1000, teams: [llm]}, production: 500, ablation: 100}\n");
  EXPECT_TRUE(check_priority(s, job("llm", "hero"), user({"llm"})).ok());
  auto r = check_priority(s, job("vision", "hero"), user({"vision"}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::forbidden);
  EXPECT_THAT(r.error().message,
              HasSubstr("team vision may not use priority class hero (it is for llm); classes it "
                        "may use: production (500), ablation (100)"));
  EXPECT_TRUE(check_priority(s, job("vision", "production"), user({"vision"})).ok());
}

TEST(CheckPriority, ARawIntegerCannotClimbAboveTheHighestClassTheTeamMayUse) {
  const SchedulingSpec s =
      scheduling("priority_classes: {hero: {value: 1000, teams: [llm]}, production: 500}\n");
  EXPECT_TRUE(check_priority(s, job("vision", "", 500), user({"vision"})).ok());
  auto r = check_priority(s, job("vision", "", 1000), user({"vision"}));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message,
              HasSubstr("priority 1000 is above what team vision may use (500); classes it may "
                        "use: production (500)"));
}

TEST(CheckPriority, ATeamsMaxPriorityCapsEvenTheClassesOpenToIt) {
  const SchedulingSpec s = scheduling(
      "priority_classes: {hero: 1000, production: 500}\n"
      "teams:\n  interns: {gpus: 8, max_priority: 100}\n");
  EXPECT_THAT(check_priority(s, job("interns", "production"), user({"interns"})).error().message,
              HasSubstr("may not use priority class production (above its max_priority of 100); "
                        "classes it may use: none"));
  EXPECT_TRUE(check_priority(s, job("interns", "", 100), user({"interns"})).ok());
}

TEST(CheckPriority, WithNoClassesAndNoCeilingsPriorityIsUnbounded) {
  EXPECT_TRUE(check_priority(SchedulingSpec{}, job("", "", 999999), user({})).ok());
}

TEST(CheckPriority, OperatorsAndAdminsMayUseAnyClass) {
  const SchedulingSpec s = scheduling("priority_classes: {hero: {value: 1000, teams: [llm]}}\n");
  EXPECT_TRUE(check_priority(s, job("vision", "hero"), Submitter{"olga", true, {}}).ok());
}

TEST(SchedulingFile, ClassesForSomeTeamsAndCeilingsAreCheckedAtTheirLine) {
  EXPECT_THAT(error("priority_classes: {hero: {value: 1000, teams: []}}\n"),
              HasSubstr("clusters.yaml:3:47: priority class \"hero\" names no team"));
  EXPECT_THAT(error("priority_classes: {hero: {teams: [llm]}}\n"),
              HasSubstr("missing required key \"value\""));
  EXPECT_THAT(error("priority_classes: {hero: {value: 1000, team: [llm]}}\n"),
              HasSubstr("did you mean \"teams\""));
  EXPECT_THAT(error("teams:\n  vision: {gpus: 8, max_priority: 2000000}\n"),
              HasSubstr("\"max_priority\" must be"));
}

TEST(SecretsSection, NamesASourceAndTheTeamsGranted) {
  auto file = parse_clusters_file(std::string(kClusters) +
                                      "secrets:\n"
                                      "  hf: {file: /etc/orchestrate/hf.token, teams: [nlp]}\n"
                                      "  wandb: {env: WANDB_API_KEY}\n",
                                  "clusters.yaml");
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_EQ(file->secrets.size(), 2u);
  EXPECT_EQ(file->secrets[0].name, "hf");
  EXPECT_EQ(file->secrets[0].source.file, "/etc/orchestrate/hf.token");
  EXPECT_EQ(file->secrets[0].teams, (std::vector<std::string>{"nlp"}));
  EXPECT_EQ(file->secrets[1].source.env, "WANDB_API_KEY");
  EXPECT_THAT(error("secrets:\n  hf: {file: hf.token}\n"),
              HasSubstr("clusters.yaml:4:14: secret \"hf\".file is a relative path"));
  EXPECT_THAT(error("secrets:\n  hf: {file: /a, env: B}\n"),
              HasSubstr("secret \"hf\" must name exactly one source"));
  EXPECT_THAT(error("secrets:\n  \"a b\": {env: B}\n"), HasSubstr("a secret's name must be"));
  EXPECT_THAT(error("secrets: [hf]\n"), HasSubstr("\"secrets\" must be a map"));
}

}  // namespace
}  // namespace orch

namespace orch {
namespace {

TEST(SpecPosition, AKeyPathFindsItsValueInTheDocument) {
  const std::string doc =
      "name: a\n"
      "placement:\n"
      "  allowed: [alpha, gamma]\n"
      "secret_env: {HF_TOKEN: {secret: hf}}\n";
  EXPECT_EQ(position_in(doc, "placement.allowed[1]")->line, 3);
  EXPECT_EQ(position_in(doc, "placement.allowed[1]")->column, 20);
  EXPECT_EQ(position_in(doc, "secret_env.HF_TOKEN")->column, 24);
  EXPECT_FALSE(position_in(doc, "placement.allowed[2]"));
  EXPECT_FALSE(position_in(doc, "team"));
  EXPECT_FALSE(position_in("{unclosed", "a"));
}

TEST(SpecPosition, AnErrorThatNamesAKeySaysWhereAsTheParserWould) {
  Error e = make_error(ErrorKind::invalid, "placement.allowed names unknown cluster \"gamma\"");
  e.where = "placement.allowed[1]";
  const std::string doc = "name: a\nplacement: {allowed: [alpha, gamma]}\n";
  EXPECT_EQ(locate_error(e, doc, "job.yaml").message,
            "job.yaml:2:30: placement.allowed names unknown cluster \"gamma\"");
  Error priority = make_error(ErrorKind::forbidden, "may not use hero");
  priority.where = "priority|priority_class";
  EXPECT_EQ(locate_error(priority, "name: a\npriority_class: hero\n", "j").message,
            "j:2:17: may not use hero");
  Error nowhere = make_error(ErrorKind::invalid, "x");
  EXPECT_EQ(locate_error(nowhere, doc, "job.yaml").message, "x");
  Error placed = make_error(ErrorKind::invalid, "job.yaml:1:1: already placed");
  placed.where = "name";
  EXPECT_EQ(locate_error(placed, doc, "job.yaml").message, "job.yaml:1:1: already placed");
}

}  // namespace
}  // namespace orch
