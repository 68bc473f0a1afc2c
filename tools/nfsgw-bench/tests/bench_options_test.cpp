#include "tools/nfsgw-bench/bench_options.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace nfsgw::bench {
namespace {

TEST(BenchOptions, Defaults) {
  Options o = parse_options({"--url", "nfs://127.0.0.1/x"});
  EXPECT_EQ(o.mode, Mode::Getattr);
  EXPECT_EQ(o.connections, 4u);
  EXPECT_EQ(o.inflight, 16u);
  EXPECT_DOUBLE_EQ(o.duration_s, 10.0);
  EXPECT_EQ(o.count, 0u);
  EXPECT_EQ(o.uid, 0u);
  EXPECT_FALSE(o.json);
}

TEST(BenchOptions, ParsesEverythingBothSpellings) {
  Options o = parse_options({"--url=nfs://h/e", "--mode", "lookup-missing", "--connections=8", "--inflight", "32",
                             "--duration", "1.5", "--count", "1000", "--files", "10", "--size", "100",
                             "--setup", "--json", "--uid", "1000", "--gid=100", "--threads", "2"});
  EXPECT_EQ(o.url, "nfs://h/e");
  EXPECT_EQ(o.mode, Mode::LookupMissing);
  EXPECT_EQ(o.connections, 8u);
  EXPECT_EQ(o.inflight, 32u);
  EXPECT_DOUBLE_EQ(o.duration_s, 1.5);
  EXPECT_EQ(o.count, 1000u);
  EXPECT_EQ(o.files, 10u);
  EXPECT_EQ(o.size, 100u);
  EXPECT_TRUE(o.setup);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.uid, 1000u);
  EXPECT_EQ(o.gid, 100u);
  EXPECT_EQ(o.threads, 2u);
}

TEST(BenchOptions, AllModesRoundTrip) {
  for (const char* m : {"null", "getattr", "lookup", "lookup-missing", "access", "read", "write", "php", "walk",
                        "churn", "seqwrite", "unpack", "locks"}) {
    auto mode = mode_from_name(m);
    ASSERT_TRUE(mode.has_value()) << m;
    EXPECT_STREQ(mode_name(*mode), m);
  }
  EXPECT_FALSE(mode_from_name("GETATTR").has_value());
}

TEST(BenchOptions, DurationIsAlwaysBounded) {
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--duration", "601"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--duration", "0"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--duration", "inf"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--duration", "nan"}), std::invalid_argument);
}

TEST(BenchOptions, RejectsBadInput) {
  EXPECT_THROW(parse_options({}), std::invalid_argument);  // no url
  EXPECT_THROW(parse_options({"--url"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--mode", "stat"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--connections", "0"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--connections", "4x"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--inflight", "-1"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--size", "99999999999"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--dir", "a/b"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--dir", ".."}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--json=yes"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--bogus"}), std::invalid_argument);
}

TEST(BenchOptions, PrepareLocalNeedsNoUrl) {
  Options o = parse_options({"--prepare-local", "/tmp/x", "--files", "3"});
  EXPECT_EQ(o.prepare_local, "/tmp/x");
  EXPECT_EQ(o.files, 3u);
}

TEST(BenchOptions, Order) {
  EXPECT_FALSE(parse_options({"--url", "nfs://h/e"}).sequential);
  EXPECT_TRUE(parse_options({"--url", "nfs://h/e", "--order", "sequential"}).sequential);
  EXPECT_FALSE(parse_options({"--url", "nfs://h/e", "--order=random"}).sequential);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--order", "seq"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--order"}), std::invalid_argument);
}

TEST(BenchOptions, WriteModes) {
  Options o = parse_options({"--url", "nfs://h/e", "--mode", "seqwrite", "--file-size", "1073741824", "--size",
                             "1048576"});
  EXPECT_EQ(o.mode, Mode::SeqWrite);
  EXPECT_EQ(o.file_size, 1073741824u);
  EXPECT_EQ(o.size, 1048576u);
  EXPECT_EQ(parse_options({"--url", "nfs://h/e"}).file_size, 64u << 20);
  EXPECT_TRUE(parse_options({"--url", "nfs://h/e", "--mode", "unpack"}).setattr_times);
  EXPECT_FALSE(parse_options({"--url", "nfs://h/e", "--mode", "unpack", "--setattr", "mode"}).setattr_times);
  EXPECT_TRUE(parse_options({"--url", "nfs://h/e", "--setattr=times"}).setattr_times);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--setattr", "mtime"}), std::invalid_argument);
  EXPECT_EQ(parse_options({"--url", "nfs://h/e", "--mode", "locks"}).nlm_port, 0u);  // rpcbind
  EXPECT_EQ(parse_options({"--url", "nfs://h/e", "--mode", "locks", "--nlm-port", "4045"}).nlm_port, 4045u);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--nlm-port", "0"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--nlm-port", "65536"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--file-size", "0"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--file-size", "1099511627777"}), std::invalid_argument);
  // A write of 0 bytes per call would never end.
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--mode", "seqwrite", "--size", "0"}), std::invalid_argument);
  EXPECT_THROW(parse_options({"--url", "nfs://h/e", "--mode", "unpack", "--size", "0"}), std::invalid_argument);
  EXPECT_NO_THROW(parse_options({"--url", "nfs://h/e", "--mode", "write", "--size", "0"}));
}

TEST(BenchOptions, ThreadsNeverExceedConnections) {
  Options o = parse_options({"--url", "nfs://h/e", "--connections", "2", "--threads", "8"});
  EXPECT_EQ(o.threads, 2u);
}

}  // namespace
}  // namespace nfsgw::bench
