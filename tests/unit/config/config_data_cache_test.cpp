// The data cache's keys: [cache] block_kb and data_max_gb, and the export keys
// data_cache and readahead_kb (defaults, bounds, errors).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "config_test_helpers.h"

using namespace nfsgw::config;
using nfsgw::config::testing::expect_refused;
using nfsgw::config::testing::kExport;
using nfsgw::config::testing::export_of;

namespace {

CacheConfig cache_of(const std::string& cache_lines) {
  return parse_config("[cache]\n" + cache_lines + kExport, "test.toml").cache;
}

}  // namespace

TEST(ConfigDataCache, Defaults) {
  const auto c = parse_config(kExport).cache;
  EXPECT_EQ(c.block_kb, 1024u);
  EXPECT_EQ(c.data_max_gb, 16u);
  EXPECT_EQ(c.metadata_max_gb, 4u);  // a budget of its own
  const auto e = export_of("");
  EXPECT_TRUE(e.data_cache);
  EXPECT_EQ(e.readahead_kb, 4096u);
}

TEST(ConfigDataCache, BlockKbIsAPowerOfTwoIn64To16384) {
  EXPECT_EQ(cache_of("block_kb = 64\n").block_kb, 64u);
  EXPECT_EQ(cache_of("block_kb = 256\n").block_kb, 256u);
  EXPECT_EQ(cache_of("block_kb = 16384\n").block_kb, 16384u);
  expect_refused("[cache]\nblock_kb = 1000\n" + kExport,
                 {"test.toml:2: cache.block_kb: 1000 is not a power of two", "64, 128, 256, ..., 16384"});
  expect_refused("[cache]\nblock_kb = 32\n" + kExport, {"cache.block_kb", "32 is out of range", "64..16384"});
  expect_refused("[cache]\nblock_kb = 32768\n" + kExport, {"cache.block_kb", "32768", "64..16384"});
  expect_refused("[cache]\nblock_kb = 0\n" + kExport, {"cache.block_kb", "64..16384"});
  expect_refused("[cache]\nblock_kb = \"1M\"\n" + kExport, {"cache.block_kb", "expected an integer", "\"1M\""});
}

TEST(ConfigDataCache, DataMaxGb) {
  EXPECT_EQ(cache_of("data_max_gb = 1\n").data_max_gb, 1u);
  EXPECT_EQ(cache_of("data_max_gb = 65536\n").data_max_gb, 65536u);
  EXPECT_EQ(cache_of("data_max_gb = 900\n").data_max_gb, 900u);
  EXPECT_EQ(cache_of("data_max_gb = 900\n").metadata_max_gb, 4u);
  expect_refused("[cache]\ndata_max_gb = 0\n" + kExport,
                 {"test.toml:2: cache.data_max_gb: 0 is out of range; allowed: 1..65536"});
  expect_refused("[cache]\ndata_max_gb = 65537\n" + kExport, {"cache.data_max_gb", "65537", "1..65536"});
  expect_refused("[cache]\ndata_max_gb = 2.5\n" + kExport, {"cache.data_max_gb", "float 2.5"});
  expect_refused("[cache]\ndata_gb = 4\n" + kExport, {"cache.data_gb", "unknown key", "data_max_gb"});
}

TEST(ConfigDataCache, ExportDataCacheAndReadahead) {
  EXPECT_FALSE(export_of("data_cache = false\n").data_cache);
  EXPECT_TRUE(export_of("data_cache = true\n").data_cache);
  EXPECT_TRUE(export_of("data_cache = false\n").coherency.enabled);  // metadata stays on
  EXPECT_EQ(export_of("readahead_kb = 0\n").readahead_kb, 0u);
  EXPECT_EQ(export_of("readahead_kb = 262144\n").readahead_kb, 262144u);
  EXPECT_EQ(export_of("readahead_kb = 100\n").readahead_kb, 100u);
  expect_refused(kExport + "data_cache = \"yes\"\n",
                 {"test.toml:4: export[0].data_cache", "expected true or false", "\"yes\""});
  expect_refused(kExport + "data_cache = 1\n", {"export[0].data_cache", "integer 1"});
  expect_refused(kExport + "readahead_kb = -1\n", {"export[0].readahead_kb", "-1 is out of range", "0..262144"});
  expect_refused(kExport + "readahead_kb = 262145\n", {"export[0].readahead_kb", "0..262144"});
  expect_refused(kExport + "readahead_kb = \"4M\"\n", {"export[0].readahead_kb", "expected an integer"});
  expect_refused(kExport + "read_ahead_kb = 1\n", {"export[0].read_ahead_kb", "unknown key", "readahead_kb"});
}
