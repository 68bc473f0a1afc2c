#include "tools/nfsgw-bench/report.h"

#include <gtest/gtest.h>

namespace nfsgw::bench {
namespace {

RunReport sample() {
  RunReport r;
  r.mode = "lookup-missing";
  r.connections = 4;
  r.inflight = 16;
  r.threads = 1;
  r.seconds = 2.0;
  for (int i = 0; i < 100; ++i) r.stats.record_call(100'000 + i * 1000, 2, "");
  return r;
}

TEST(Report, JsonCarriesCountsRatesAndStatuses) {
  std::string j = to_json(sample());
  EXPECT_NE(j.find("\"mode\":\"lookup-missing\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"calls\":100,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"calls_per_s\":50.0,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"p50_us\":149."), std::string::npos) << j;
  EXPECT_NE(j.find("\"errors\":{\"NFS3ERR_NOENT\":100}"), std::string::npos) << j;
  EXPECT_EQ(j.find("requests"), std::string::npos) << j;
  EXPECT_EQ(j.front(), '{');
  EXPECT_EQ(j.back(), '}');
}

TEST(Report, TransportErrorsAndOkAreSeparate) {
  CallStats s;
  s.record_call(10, 0, "");
  s.record_call(10, 0, "connection reset");
  s.record_call(10, 70, "");
  EXPECT_EQ(s.calls, 3u);
  EXPECT_EQ(s.errors.size(), 2u);
  EXPECT_EQ(s.errors["RPC_ERROR"], 1u);
  EXPECT_EQ(s.errors["NFS3ERR_STALE"], 1u);
  EXPECT_EQ(s.error_total(), 2u);
  EXPECT_EQ(nfs3_status_name(12345), "NFS3ERR_12345");
}

TEST(Report, PhpAndWalkFields) {
  RunReport r = sample();
  r.mode = "php";
  r.stats.requests = 25;
  r.stats.request_latency_ns.record(400'000);
  std::string j = to_json(r);
  EXPECT_NE(j.find("\"requests\":25,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"requests_per_s\":12.5,"), std::string::npos) << j;
  r.mode = "walk";
  r.complete = false;
  r.walk_entries = 7;
  j = to_json(r);
  EXPECT_NE(j.find("\"complete\":false"), std::string::npos) << j;
  EXPECT_NE(j.find("\"entries\":7"), std::string::npos) << j;
  EXPECT_NE(human_line(r).find("INCOMPLETE"), std::string::npos);
}

TEST(Report, WriteFields) {
  RunReport r = sample();
  r.mode = "seqwrite";
  std::string j = to_json(r);
  EXPECT_EQ(j.find("\"bytes\""), std::string::npos) << j;  // only for the write modes
  r.write_mode = true;
  r.write_bytes = 3u << 20;
  r.write_files = 2;
  r.short_writes = 1;
  r.complete = true;
  j = to_json(r);
  EXPECT_NE(j.find("\"complete\":true"), std::string::npos) << j;
  EXPECT_NE(j.find("\"files\":2,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"bytes\":3145728,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"short_writes\":1"), std::string::npos) << j;
  std::string line = human_line(r);
  EXPECT_NE(line.find("2 file(s) finished, 3145728 bytes written = 1.5 MiB/s"), std::string::npos) << line;
  EXPECT_EQ(line.find("INCOMPLETE"), std::string::npos) << line;
  r.complete = false;
  EXPECT_NE(human_line(r).find("INCOMPLETE"), std::string::npos);
}

}  // namespace
}  // namespace nfsgw::bench
