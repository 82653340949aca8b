// The clusters file's `data` section (issue 5): caps, windows, throttling, where datasets go,
// and how one site pulls from another; each mistake with its place and words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "scheduler/spec/clusters_parser.h"
#include "scheduler/spec/job_spec_parser.h"

namespace orch {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Two clusters; `data` is spliced into alpha.
std::string with_data(const std::string& data) {
  return "clusters:\n  - name: alpha\n    data:\n" + data + "  - name: beta\n";
}

TEST(DataSpec, ReadsEveryField) {
  auto r = parse_clusters_file(with_data(R"(      bwlimit_mb_s: 100
      windows: ["22:00-06:00", "12:00-13:00"]
      datasets_root: /lustre/team/datasets
      audit_interval_s: 900
      throttle: {mfu_drop_percent: 5, decrease: 0.25, increase_mb_s: 2, min_mb_s: 0.5,
                 interval_s: 30}
      pull_from:
        beta: {host: 10.0.0.5, port: 2222, user: svc, key_file: /home/svc/.ssh/id_ed25519,
               known_hosts: /home/svc/.ssh/known_hosts}
)"),
                               "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const DataSpec& d = r->clusters.at(0).data;
  EXPECT_EQ(d.bwlimit_mb_s, 100.0);
  EXPECT_EQ(d.windows, (std::vector<std::string>{"22:00-06:00", "12:00-13:00"}));
  EXPECT_EQ(d.datasets_root, "/lustre/team/datasets");
  EXPECT_EQ(d.audit_interval_s, 900.0);
  EXPECT_EQ(d.throttle.mfu_drop_percent, 5.0);
  EXPECT_EQ(d.throttle.decrease, 0.25);
  EXPECT_EQ(d.throttle.increase_mb_s, 2.0);
  EXPECT_EQ(d.throttle.min_mb_s, 0.5);
  EXPECT_EQ(d.throttle.interval_s, 30.0);
  ASSERT_EQ(d.pull_from.size(), 1u);
  const PeerSpec& p = d.pull_from.at("beta");
  EXPECT_EQ(p.host, "10.0.0.5");
  EXPECT_EQ(p.port, 2222);
  EXPECT_EQ(p.user, "svc");
  EXPECT_EQ(p.key_file, "/home/svc/.ssh/id_ed25519");
  EXPECT_EQ(p.known_hosts, "/home/svc/.ssh/known_hosts");
}

TEST(DataSpec, DefaultsWhenAbsent) {
  auto r = parse_clusters_file("clusters: [{name: a}]", "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const DataSpec& d = r->clusters.at(0).data;
  EXPECT_EQ(d.bwlimit_mb_s, 0.0);
  EXPECT_TRUE(d.windows.empty());
  EXPECT_TRUE(d.pull_from.empty());
  EXPECT_EQ(d.datasets_root, "");
  EXPECT_EQ(d.audit_interval_s, 600.0);
  EXPECT_EQ(d.throttle.mfu_drop_percent, 3.0);
  EXPECT_EQ(d.throttle.decrease, 0.5);
  EXPECT_EQ(d.throttle.increase_mb_s, 0.0);
  EXPECT_EQ(d.throttle.min_mb_s, 1.0);
  EXPECT_EQ(d.throttle.interval_s, 10.0);
}

TEST(DataSpec, PeerPortDefaultsTo22AndEmptySectionsAreDefaults) {
  auto r = parse_clusters_file(with_data(R"(      throttle:
      pull_from:
        beta: {host: h, user: u, key_file: /k, known_hosts: /kh}
)"),
                               "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->clusters.at(0).data.pull_from.at("beta").port, 22);
  EXPECT_EQ(r->clusters.at(0).data.throttle.decrease, 0.5);
}

TEST(DataSpec, ZeroMeansNoCapAndNoAudit) {
  auto r = parse_clusters_file(with_data("      {bwlimit_mb_s: 0, audit_interval_s: 0}\n"),
                               "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->clusters.at(0).data.audit_interval_s, 0.0);
}

struct BadData {
  const char* why;
  std::string yaml;
  std::string where;
  std::string message;
};

const std::string kPeer = "{host: h, user: u, key_file: /k, known_hosts: /kh}";

const BadData kBad[] = {
    {"data a list", with_data("      - 1\n"), "4:7", "data must be a map, got a list"},
    {"typo", with_data("      bwlimit_mbs: 1\n"), "4:7",
     "unknown key \"bwlimit_mbs\" in data; did you mean \"bwlimit_mb_s\"?"},
    {"negative cap", with_data("      bwlimit_mb_s: -1\n"), "4:21",
     "\"bwlimit_mb_s\" must be a number >= 0, got \"-1\"; expected MB/s such as 100 (0: no cap)"},
    {"windows a string", with_data("      windows: \"22:00-06:00\"\n"), "4:16",
     "\"windows\" must be a list, got the string \"22:00-06:00\""},
    {"malformed window", with_data("      windows: [\"22:00-06:00\", \"25:00-06:00\"]\n"), "4:32",
     "data.windows: window \"25:00-06:00\": hour 25 is not 00..23; expected a UTC window "
     "\"HH:MM-HH:MM\" such as \"22:00-06:00\""},
    {"empty window", with_data("      windows: [\"06:00-06:00\"]\n"), "4:17",
     "window \"06:00-06:00\": start and end are the same"},
    {"empty datasets root", with_data("      datasets_root: \"\"\n"), "4:22",
     "\"datasets_root\" must be a non-empty string"},
    {"negative audit", with_data("      audit_interval_s: -5\n"), "4:25",
     "\"audit_interval_s\" must be a number from 0 to 31536000"},
    {"throttle typo", with_data("      throttle: {decrese: 0.5}\n"), "4:18",
     "unknown key \"decrese\" in data.throttle; did you mean \"decrease\"?"},
    {"drop zero", with_data("      throttle: {mfu_drop_percent: 0}\n"), "4:36",
     "\"mfu_drop_percent\" must be a number > 0, got \"0\""},
    {"drop 100", with_data("      throttle: {mfu_drop_percent: 100}\n"), "4:36",
     "\"mfu_drop_percent\" must be below 100, got 100; expected a percentage such as 3"},
    {"decrease one", with_data("      throttle: {decrease: 1}\n"), "4:28",
     "\"decrease\" must be below 1, got 1; expected a factor below 1 such as 0.5"},
    {"decrease zero", with_data("      throttle: {decrease: 0}\n"), "4:28",
     "\"decrease\" must be a number > 0"},
    {"min zero", with_data("      throttle: {min_mb_s: 0}\n"), "4:28",
     "\"min_mb_s\" must be a number > 0, got \"0\"; expected MB/s such as 1"},
    {"negative increase", with_data("      throttle: {increase_mb_s: -1}\n"), "4:33",
     "\"increase_mb_s\" must be a number >= 0"},
    {"interval zero", with_data("      throttle: {interval_s: 0}\n"), "4:30",
     "\"interval_s\" must be a number > 0"},
    {"pull_from a list", with_data("      pull_from: [beta]\n"), "4:18",
     "\"pull_from\" must be a map, got a list; expected a map from cluster name to {host, user, "
     "key_file, known_hosts}"},
    {"pull_from bad name", with_data("      pull_from: {\"b c\": " + kPeer + "}\n"), "4:19",
     "a key of \"pull_from\" must be 1 to 64 letters"},
    {"pull_from unknown cluster", with_data("      pull_from: {bata: " + kPeer + "}\n"), "4:19",
     "data.pull_from of cluster \"alpha\" names \"bata\", which is not a cluster in this file "
     "(did you mean \"beta\"?); expected one of beta"},
    {"pull_from itself", with_data("      pull_from: {alpha: " + kPeer + "}\n"), "4:19",
     "cluster \"alpha\" cannot pull from itself in data.pull_from"},
    {"peer without known_hosts",
     with_data("      pull_from:\n        beta: {host: h, user: u, key_file: /k}\n"), "5:15",
     "missing required key \"known_hosts\" in data.pull_from.beta; expected known_hosts: a file "
     "on this site's login node with its host key"},
    {"peer without host", with_data("      pull_from:\n        beta:\n"), "5:9",
     "missing required key \"host\" in data.pull_from.beta"},
    {"peer typo",
     with_data(
         "      pull_from:\n        beta: {hots: h, user: u, key_file: /k, known_hosts: /kh}\n"),
     "5:16", "unknown key \"hots\" in data.pull_from.beta; did you mean \"host\"?"},
    {"peer port", with_data("      pull_from:\n        beta: {host: h, port: 0, user: u}\n"),
     "5:31", "\"port\" must be an integer from 1 to 65535, got \"0\""},
    {"peer twice",
     with_data("      pull_from:\n        beta: " + kPeer + "\n        beta: " + kPeer + "\n"),
     "6:9", "appears twice"},
};

class BadDataSection : public ::testing::TestWithParam<BadData> {};

TEST_P(BadDataSection, IsRejectedWithPositionAndReason) {
  const BadData& row = GetParam();
  auto r = parse_clusters_file(row.yaml, "clusters.yaml");
  ASSERT_FALSE(r.ok()) << row.why << ": accepted";
  EXPECT_EQ(r.error().kind, ErrorKind::invalid);
  EXPECT_THAT(r.error().message, StartsWith("clusters.yaml:" + row.where + ": "))
      << row.why << ": " << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr(row.message)) << row.why;
}

INSTANTIATE_TEST_SUITE_P(Table, BadDataSection, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadData>& param_info) {
                           std::string name = param_info.param.why;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Like spec_fuzz_test.cpp, for the new sections: whatever arrives is answered, never thrown.
TEST(DataSpecFuzz, TruncatedAndGarbledDataSectionsAreAnswered) {
  const std::string clusters = with_data(R"(      bwlimit_mb_s: 100
      windows: ["22:00-06:00"]
      datasets_root: /d
      throttle: {mfu_drop_percent: 3, decrease: 0.5}
      pull_from:
        beta: {host: h, port: 22, user: u, key_file: /k, known_hosts: /kh}
)");
  const std::string job =
      "name: a\ncommand: b\ncheckpoint: {dir: c, replicate: {keep: 2, "
      "copies: 2, to: beta}}\ndatasets: [imagenet, c4]\n";
  ASSERT_TRUE(parse_clusters_file(clusters, "f.yaml").ok());
  ASSERT_TRUE(parse_job_spec(job, "f.yaml").ok());
  auto answered = [](const std::string& text, bool is_job) {
    if (is_job) {
      auto r = parse_job_spec(text, "f.yaml");
      if (!r.ok()) {
        EXPECT_EQ(r.error().message.rfind("f.yaml:", 0), 0u) << r.error().message;
      }
    } else {
      auto r = parse_clusters_file(text, "f.yaml");
      if (!r.ok()) {
        EXPECT_EQ(r.error().message.rfind("f.yaml:", 0), 0u) << r.error().message;
      }
    }
  };
  const std::string alphabet = "{}[]:,-'\"#&*!|>%@`\t\n ?0a\\";
  std::mt19937 rng(20261130);  // fixed seed: a failure reproduces
  for (const std::string* base : {&clusters, &job}) {
    for (std::size_t n = 0; n <= base->size(); ++n) {
      EXPECT_NO_THROW(answered(base->substr(0, n), base == &job));
    }
    for (int round = 0; round < 500; ++round) {
      std::string text = *base;
      for (int e = 0; e < 1 + static_cast<int>(rng() % 3); ++e) {
        const std::size_t at = rng() % text.size();
        text[at] = alphabet[rng() % alphabet.size()];
      }
      EXPECT_NO_THROW(answered(text, base == &job));
    }
  }
}

TEST(DataSpec, PullFromMayNameAClusterDeclaredLater) {
  auto r =
      parse_clusters_file("clusters:\n  - name: alpha\n    data: {pull_from: {gamma: " + kPeer +
                              "}}\n  - name: beta\n  - name: gamma\n",
                          "clusters.yaml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->clusters.at(0).data.pull_from.count("gamma"), 1u);
}

// A document for `orchestrate cluster add` may pull from a cluster already running; a name
// neither in it nor running is still refused, with the running ones among the suggestions.
TEST(DataSpec, AnAddedClusterMayPullFromARunningOne) {
  const std::string doc =
      "clusters:\n  - name: gamma\n    data:\n      pull_from:\n        alpha: {host: h, user: u, "
      "key_file: /k, known_hosts: /kh}\n";
  EXPECT_FALSE(parse_clusters_file(doc, "gamma.yaml").ok());
  auto r = parse_clusters_file(doc, "gamma.yaml", {"alpha", "beta"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->clusters.at(0).data.pull_from.count("alpha"), 1u);

  auto unknown = parse_clusters_file(doc, "gamma.yaml", {"alpah"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("(did you mean \"alpah\"?)"), std::string::npos)
      << unknown.error().message;
}

}  // namespace
}  // namespace orch
