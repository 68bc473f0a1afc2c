// `nfsgw stats` output: sizes, the per-export tables, the store section, JSON.
#include <gtest/gtest.h>

#include <string>

#include "gateway/admin/stats_format.h"

namespace nfsgw::admin {
namespace {

stats::Report sample_report() {
  stats::Report r;
  metacache::ExportReport e;
  e.path = "/export";
  e.cache_enabled = true;
  e.consistency = "ttl";
  e.procs[static_cast<std::size_t>(nfs3::Proc::Getattr)] = {200, 150, 50, 7, 57};
  e.procs[static_cast<std::size_t>(nfs3::Proc::Lookup)] = {100, 25, 75, 0, 75};
  r.exports.push_back({e});
  metacache::ExportReport off;
  off.path = "/scratch";
  r.exports.push_back({off});
  r.store.tables.push_back({"attr", 10, 1536, 20, 3u << 20});
  r.store.tables.push_back({"lookup", 5, 512, 0, 0});
  r.store.evicted_memory = 4;
  r.store.evicted_disk = 2;
  return r;
}

TEST(StatsFormat, HumanSizes) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1024), "1.0 KiB");
  EXPECT_EQ(format_size(1536), "1.5 KiB");
  EXPECT_EQ(format_size((1u << 20) - 1), "1.0 MiB");
  EXPECT_EQ(format_size(3u << 20), "3.0 MiB");
  EXPECT_EQ(format_size(5ull << 40), "5.0 TiB");
  EXPECT_EQ(format_size(~0ull), "16.0 EiB");
}

TEST(StatsFormat, TextShowsEachExportAndOnlyProceduresWithCalls) {
  const std::string t = format_stats_text(sample_report());
  EXPECT_NE(t.find("export /export  cache on  consistency ttl\n"), std::string::npos) << t;
  EXPECT_NE(t.find("export /scratch  cache off\n  no calls yet\n"), std::string::npos) << t;
  EXPECT_NE(t.find("procedure"), std::string::npos);
  EXPECT_NE(t.find("revalidations"), std::string::npos);
  EXPECT_EQ(t.find("READDIR"), std::string::npos) << "a procedure without calls is listed:\n" << t;

  // GETATTR: calls 200, hits 150, misses 50, revalidations 7, origin 57, 75.0%.
  const auto row = t.find("  GETATTR ");
  ASSERT_NE(row, std::string::npos) << t;
  const std::string line = t.substr(row, t.find('\n', row) - row);
  EXPECT_NE(line.find(" 200 "), std::string::npos) << line;
  EXPECT_NE(line.find(" 57 "), std::string::npos) << line;
  EXPECT_NE(line.find("75.0%"), std::string::npos) << line;
  // The total of both procedures: 300 calls, 175 hits: 58.3%.
  const auto total = t.find("  total ");
  ASSERT_NE(total, std::string::npos) << t;
  EXPECT_NE(t.substr(total, t.find('\n', total) - total).find("58.3%"), std::string::npos) << t;
}

TEST(StatsFormat, ColumnsLineUp) {
  const std::string t = format_stats_text(sample_report());
  const auto header = t.find("  procedure");
  const auto getattr = t.find("  GETATTR");
  ASSERT_NE(header, std::string::npos);
  ASSERT_NE(getattr, std::string::npos);
  const auto line_len = [&](std::size_t at) { return t.find('\n', at) - at; };
  // Right-aligned last column: every row of the table ends at the same column.
  EXPECT_EQ(line_len(header), line_len(getattr)) << t;
  EXPECT_EQ(line_len(header), line_len(t.find("  LOOKUP"))) << t;
}

TEST(StatsFormat, StoreSectionWithSizesEvictionsAndDegradedFlag) {
  auto r = sample_report();
  std::string t = format_stats_text(r);
  const auto store = t.find("store\n");
  ASSERT_NE(store, std::string::npos) << t;
  const std::string s = t.substr(store);
  EXPECT_NE(s.find("attr"), std::string::npos);
  EXPECT_NE(s.find("1.5 KiB"), std::string::npos) << s;
  EXPECT_NE(s.find("3.0 MiB"), std::string::npos) << s;
  EXPECT_NE(s.find("2.0 KiB"), std::string::npos) << "memory total:\n" << s;
  EXPECT_NE(s.find("evicted: 4 from memory, 2 from disk"), std::string::npos) << s;
  EXPECT_NE(s.find("disk: ok"), std::string::npos) << s;
  EXPECT_EQ(s.find("DEGRADED"), std::string::npos);
  r.store.degraded = true;
  t = format_stats_text(r);
  EXPECT_NE(t.find("disk: DEGRADED"), std::string::npos) << t;
}

TEST(StatsFormat, JsonCarriesTheRawFigures) {
  auto r = sample_report();
  r.exports[0].metadata.path = "/ex\"port";
  const std::string j = format_stats_json(r);
  EXPECT_EQ(j.find('\n'), j.size() - 1) << "one line";
  EXPECT_NE(j.find(R"("path":"/ex\"port","cache_enabled":true,"consistency":"ttl")"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("GETATTR":{"calls":200,"hits":150,"misses":50,"revalidations":7,"origin_calls":57})"),
            std::string::npos) << j;
  EXPECT_EQ(j.find("READDIR"), std::string::npos) << j;
  EXPECT_NE(j.find(R"({"name":"attr","memory_entries":10,"memory_bytes":1536,"disk_entries":20,"disk_bytes":3145728})"),
            std::string::npos) << j;
  EXPECT_NE(j.find(R"("evicted_memory":4,"evicted_disk":2,"degraded":false},"data_store":null})"),
            std::string::npos) << j;
  EXPECT_NE(j.find(R"("data":null)"), std::string::npos) << "exports without a data cache say so:\n" << j;
  // Balanced braces and brackets (a cheap well-formedness check).
  int braces = 0, brackets = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (in_string) {
      if (j[i] == '\\') ++i;
      else if (j[i] == '"') in_string = false;
      continue;
    }
    if (j[i] == '"') in_string = true;
    braces += j[i] == '{' ? 1 : j[i] == '}' ? -1 : 0;
    brackets += j[i] == '[' ? 1 : j[i] == ']' ? -1 : 0;
    ASSERT_GE(braces, 0);
    ASSERT_GE(brackets, 0);
  }
  EXPECT_EQ(braces, 0);
  EXPECT_EQ(brackets, 0);
}

stats::Report with_data_cache() {
  auto r = sample_report();
  auto& d = r.exports[0].data.emplace();
  d.reads = 40;
  d.read_hits = 30;
  d.read_misses = 8;
  d.forwarded = 2;
  d.blocks_fetched = 12;
  d.bytes_fetched = 12u << 20;
  d.blocks_read_ahead = 5;
  d.bytes_from_cache = 3u << 20;
  d.write_through = 6;
  d.blocks_patched = 4;
  d.files_dropped = 1;
  d.store_errors = 0;
  cache::BlockUsage b;
  b.files = 3;
  b.blocks = 12;
  b.bytes = 12u << 20;
  b.budget = 16ull << 30;
  b.read_hits = 30;
  b.read_misses = 9;
  b.corrupt_dropped = 1;
  b.evicted_files = 2;
  b.evicted_blocks = 7;
  b.evicted_bytes = 7u << 20;
  r.blocks = b;
  return r;
}

TEST(StatsFormat, TextShowsTheDataCachePerExportAndItsStore) {
  const std::string t = format_stats_text(with_data_cache());
  EXPECT_NE(t.find("  data: reads 40 (hits 30, misses 8, forwarded 2, hit % 75.0%); blocks fetched 12 (12.0 MiB), "
                   "read ahead 5; from cache 3.0 MiB; writes 6 (patched 4); files dropped 1; store errors 0\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("export /scratch  cache off\n  no calls yet\n  data cache off\n"), std::string::npos) << t;
  EXPECT_NE(t.find("data store\n  3 files, 12 blocks, 12.0 MiB of 16.0 GiB\n"), std::string::npos) << t;
  EXPECT_NE(t.find("1 corrupt blocks dropped"), std::string::npos) << t;
  EXPECT_NE(t.find("evicted: 2 files, 7 blocks, 7.0 MiB"), std::string::npos) << t;
  EXPECT_EQ(format_stats_text(sample_report()).find("data store"), std::string::npos)
      << "a gateway without a block store shows none";
}

TEST(StatsFormat, JsonCarriesTheDataCacheFigures) {
  const std::string j = format_stats_json(with_data_cache());
  EXPECT_NE(j.find(R"("data":{"reads":40,"read_hits":30,"read_misses":8,"forwarded":2,"blocks_fetched":12,)"
                   R"("bytes_fetched":12582912,"blocks_read_ahead":5,"bytes_from_cache":3145728,"write_through":6,)"
                   R"("blocks_patched":4,"files_dropped":1,"store_errors":0})"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find(R"("data_store":{"files":3,"blocks":12,"bytes":12582912,"budget":17179869184,"read_hits":30,)"
                   R"("read_misses":9,"corrupt_dropped":1,"evicted_files":2,"evicted_blocks":7,"evicted_bytes":7340032}})"),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find('\n'), j.size() - 1) << "one line";
}

TEST(StatsFormat, TextShowsTheDuplicateRequestCache) {
  stats::Report r = sample_report();
  EXPECT_EQ(format_stats_text(r).find("duplicate request cache"), std::string::npos)
      << "a report without the counts shows no section";
  r.duplicates = rpc::DuplicateCacheCounts{5, 2, 31};
  const std::string t = format_stats_text(r);
  EXPECT_NE(t.find("duplicate request cache\n  31 calls remembered; retransmissions: 5 answered with the kept "
                   "reply, 2 waited for the first call\n"),
            std::string::npos)
      << t;
}

TEST(StatsFormat, JsonCarriesTheDuplicateRequestCache) {
  stats::Report r = sample_report();
  EXPECT_EQ(format_stats_json(r).find("duplicate_cache"), std::string::npos);
  r.duplicates = rpc::DuplicateCacheCounts{5, 2, 31};
  const std::string j = format_stats_json(r);
  EXPECT_NE(j.find(R"("data_store":null,"duplicate_cache":{"entries":31,"replayed":5,"waited":2}})"),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find('\n'), j.size() - 1) << "one line";
}

writeback::WriteBackCounts write_back_counts() {
  writeback::WriteBackCounts w;
  w.dirty_bytes = 3u << 20;
  w.dirty_files = 2;
  w.log_bytes = 5u << 20;
  w.budget_bytes = 4ull << 30;
  w.oldest_dirty_age_ms = 42500;
  w.writes_absorbed = 120;
  w.bytes_absorbed = 12u << 20;
  w.flushed_bytes = 9u << 20;
  w.flushed_files = 7;
  w.flush_writes = 15;
  w.flush_commits = 3;
  w.retries = 4;
  w.verifier_changes = 1;
  w.conflicts = 2;
  w.stale_dropped = 5;
  w.budget_waits = 6;
  w.budget_jukebox = 8;
  w.log_errors = 9;
  return w;
}

TEST(StatsFormat, TextShowsTheWriteBackSection) {
  stats::Report r = sample_report();
  EXPECT_EQ(format_stats_text(r).find("write-back"), std::string::npos) << "no dirty log: no section";
  r.write_back = write_back_counts();
  const std::string t = format_stats_text(r);
  EXPECT_NE(t.find("write-back\n"
                   "  dirty: 3.0 MiB in 2 files, the oldest written 42.5 s ago; log 5.0 MiB of 4.0 GiB\n"
                   "  absorbed: 120 writes (12.0 MiB); flushed: 9.0 MiB in 7 files (15 WRITEs, 3 COMMITs to the "
                   "origin)\n"
                   "  retries 4, verifier changes 1, conflicts 2, stale dropped 5; budget waits 6 (jukebox 8); log "
                   "errors 9\n"),
            std::string::npos)
      << t;
  r.write_back = writeback::WriteBackCounts{};
  r.write_back->budget_bytes = 1ull << 30;
  EXPECT_NE(format_stats_text(r).find("write-back\n  nothing dirty; log 0 B of 1.0 GiB\n"), std::string::npos)
      << format_stats_text(r);
}

TEST(StatsFormat, JsonCarriesTheWriteBackCounts) {
  stats::Report r = sample_report();
  EXPECT_EQ(format_stats_json(r).find("write_back"), std::string::npos);
  r.write_back = write_back_counts();
  const std::string j = format_stats_json(r);
  EXPECT_NE(j.find(R"("data_store":null,"write_back":{"dirty_bytes":3145728,"dirty_files":2,"log_bytes":5242880,)"
                   R"("budget_bytes":4294967296,"oldest_dirty_age_ms":42500,"writes_absorbed":120,)"
                   R"("bytes_absorbed":12582912,"flushed_bytes":9437184,"flushed_files":7,"flush_writes":15,)"
                   R"("flush_commits":3,"retries":4,"verifier_changes":1,"conflicts":2,"stale_dropped":5,)"
                   R"("budget_waits":6,"budget_jukebox":8,"log_errors":9}})"),
            std::string::npos)
      << j;
  EXPECT_EQ(j.find('\n'), j.size() - 1) << "one line";
}

}  // namespace
}  // namespace nfsgw::admin
