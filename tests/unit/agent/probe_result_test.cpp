// The scheduler's reader of probe lines (scheduler/model/probe_result.h).

#include "scheduler/model/probe_result.h"

#include <gmock/gmock.h>

namespace orch {
namespace {

using ::testing::HasSubstr;

constexpr const char* kFull =
    R"({"probe":1,"node":"alpha-n1","hostname":"h1","at_ms":1700000000000,"ok":false,)"
    R"("checks":[{"name":"compute","ok":true,"detail":"12.3 GFLOP/s"},)"
    R"({"name":"gpu-ecc","ok":false,"detail":"GPU 1: 3"}],)"
    R"("compute":{"kind":"cpu-gemm","gflops":12.3,"n":192,"rounds":7},)"
    R"("io":{"dir":"/p","write_mb_s":812.5,"read_mb_s":2100,"free_bytes":123,"bytes":67108864},)"
    R"("gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-1","temperature_c":34,)"
    R"("sm_clock_mhz":1980,"max_sm_clock_mhz":1980,"ecc_uncorrected":0,"ecc_corrected":2,)"
    R"("retired_pages_dbe":1,"retired_pages_pending":false},{"index":1,"name":"x","uuid":"GPU-2"}],)"
    R"("xid":["NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."],"future":{"x":1}})";

TEST(ProbeResult, ParsesEveryField) {
  auto r = parse_probe_result(std::string(kFull) + "\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->node, "alpha-n1");
  EXPECT_EQ(r->hostname, "h1");
  EXPECT_EQ(r->at_ms, 1700000000000);
  EXPECT_FALSE(r->ok);
  ASSERT_EQ(r->checks.size(), 2u);
  EXPECT_EQ(r->checks[1].name, "gpu-ecc");
  EXPECT_FALSE(r->checks[1].ok);
  EXPECT_EQ(r->checks[1].detail, "GPU 1: 3");
  EXPECT_EQ(r->compute_kind, "cpu-gemm");
  EXPECT_EQ(r->gemm_gflops, 12.3);
  EXPECT_EQ(r->dir, "/p");
  EXPECT_EQ(r->write_mb_s, 812.5);
  EXPECT_EQ(r->read_mb_s, 2100);
  EXPECT_EQ(r->free_bytes, 123);
  ASSERT_EQ(r->gpus.size(), 2u);
  const GpuReading& g = r->gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-1");
  EXPECT_EQ(g.temperature_c, 34);
  EXPECT_EQ(g.sm_clock_mhz, 1980);
  EXPECT_EQ(g.max_sm_clock_mhz, 1980);
  EXPECT_EQ(g.ecc_uncorrected, 0);
  EXPECT_EQ(g.ecc_corrected, 2);
  EXPECT_EQ(g.retired_pages_dbe, 1);
  EXPECT_EQ(g.retired_pages_pending, false);
  EXPECT_EQ(r->gpus[1].index, 1);
  EXPECT_FALSE(r->gpus[1].temperature_c.has_value());
  EXPECT_FALSE(r->gpus[1].retired_pages_pending.has_value());
  ASSERT_EQ(r->xid_lines.size(), 1u);
  EXPECT_EQ(r->raw, kFull);  // without the newline
}

TEST(ProbeResult, OptionalSectionsMayBeAbsentOrNull) {
  auto r = parse_probe_result(
      R"({"probe":1,"node":"n","at_ms":1,"ok":true,"checks":[],"io":{"dir":"/d","write_mb_s":null}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->gemm_gflops.has_value());
  EXPECT_TRUE(r->compute_kind.empty());
  EXPECT_FALSE(r->write_mb_s.has_value());
  EXPECT_TRUE(r->gpus.empty());
  EXPECT_TRUE(r->xid_lines.empty());
}

TEST(ProbeResult, ErrorsNameTheField) {
  auto msg = [](const std::string& line) {
    auto r = parse_probe_result(line);
    return r.ok() ? std::string("parsed") : r.error().message;
  };
  const std::string head = R"({"probe":1,"node":"n","at_ms":1,"ok":true,"checks":[])";
  EXPECT_THAT(msg("not json"), HasSubstr("not valid JSON"));
  EXPECT_THAT(msg("[1]"), HasSubstr("object"));
  EXPECT_THAT(msg(R"({"node":"n"})"), HasSubstr("\"probe\""));
  EXPECT_THAT(msg(R"({"probe":1,"at_ms":1,"ok":true,"checks":[]})"), HasSubstr("\"node\""));
  EXPECT_THAT(msg(R"({"probe":1,"node":"n","ok":true,"checks":[]})"), HasSubstr("\"at_ms\""));
  EXPECT_THAT(msg(R"({"probe":1,"node":"n","at_ms":1,"ok":"yes","checks":[]})"),
              HasSubstr("\"ok\" must be true or false"));
  EXPECT_THAT(msg(R"({"probe":1,"node":"n","at_ms":1,"ok":true})"), HasSubstr("\"checks\""));
  EXPECT_THAT(msg(R"({"probe":1,"node":"n","at_ms":1,"ok":true,"checks":[{"ok":true}]})"),
              HasSubstr("\"checks[0].name\""));
  EXPECT_THAT(msg(head + R"(,"compute":{"gflops":"fast"}})"), HasSubstr("\"compute.gflops\""));
  EXPECT_THAT(msg(head + R"(,"compute":3})"), HasSubstr("\"compute\" must be an object"));
  EXPECT_THAT(msg(head + R"(,"io":{"free_bytes":-5}})"), HasSubstr("\"io.free_bytes\""));
  EXPECT_THAT(msg(head + R"(,"gpus":[{"index":0},{"name":"x"}]})"), HasSubstr("\"gpus[1].index\""));
  EXPECT_THAT(msg(head + R"(,"gpus":[{"index":0,"ecc_uncorrected":1.5}]})"),
              HasSubstr("\"gpus[0].ecc_uncorrected\" must be an integer"));
  EXPECT_THAT(msg(head + R"(,"gpus":[{"index":0,"retired_pages_pending":"Yes"}]})"),
              HasSubstr("\"gpus[0].retired_pages_pending\""));
  EXPECT_THAT(msg(head + R"(,"xid":[1]})"), HasSubstr("\"xid[0]\""));
  EXPECT_THAT(msg(head + R"(,"xid":"x"})"), HasSubstr("\"xid\" must be an array"));
}

TEST(ProbeResult, OutputSkipsOtherLinesAndNamesABadOne) {
  std::string good = R"({"probe":1,"node":"a","at_ms":1,"ok":true,"checks":[]})";
  auto all = parse_probe_output("Welcome to the cluster\n" + good + "\n\n  " +
                                R"({"probe":1,"node":"b","at_ms":2,"ok":false,"checks":[]})");
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].node, "b");
  auto bad = parse_probe_output(good + "\n{broken\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("line 2"));
}

}  // namespace
}  // namespace orch
