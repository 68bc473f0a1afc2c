// A bad configuration stops nfsgw before it serves anything, with a message that
// names the offending key and value, both for `--check-config` and `--config`.
// A good configuration passes the check, so the test can tell "rejects bad input"
// from "rejects everything".
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/support/nfsgw_process.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

GatewayConfig good_config() {
  GatewayConfig cfg;
  cfg.port = kGatewayPort;
  cfg.origin_url = "nfs://127.0.0.1/tmp/integ-nowhere?nfsport=" + std::to_string(kOriginNfsPort) +
                   "&mountport=" + std::to_string(kOriginMountPort);
  return cfg;
}

struct BadCase {
  const char* name;
  std::string key;
  std::string value;
  std::string (*mutate)(std::string toml);
};

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

const BadCase kCases[] = {
    {"unknown key", "frobnicate", "zebra",
     [](std::string t) { return replace_once(t, "[server]\n", "[server]\nfrobnicate = \"zebra\"\n"); }},
    {"bad CIDR", "clients", "10.0.0.0/33",
     [](std::string t) { return replace_once(t, "\"127.0.0.0/8\"", "\"10.0.0.0/33\""); }},
    {"bad CIDR address", "clients", "300.1.2.3/8",
     [](std::string t) { return replace_once(t, "\"127.0.0.0/8\"", "\"300.1.2.3/8\""); }},
    {"bad URL scheme", "origin", "http://127.0.0.1/srv",
     [](std::string t) {
       auto start = t.find("origin = \"");
       auto end = t.find('\n', start);
       return t.replace(start, end - start, "origin = \"http://127.0.0.1/srv\"");
     }},
    {"bad URL port", "origin", "nfs://127.0.0.1/srv?nfsport=notaport",
     [](std::string t) {
       auto start = t.find("origin = \"");
       auto end = t.find('\n', start);
       return t.replace(start, end - start, "origin = \"nfs://127.0.0.1/srv?nfsport=notaport\"");
     }},
    {"bad access", "access", "sometimes", [](std::string t) { return replace_once(t, "access = \"rw\"", "access = \"sometimes\""); }},
};

class BadConfig : public ::testing::Test {
 protected:
  void SetUp() override { INTEG_REQUIRE_NFSGW(); }
  TempDir dir_{"badcfg"};
};

TEST_F(BadConfig, GoodConfigPassesTheCheck) {
  std::string path = dir_.sub("good.toml");
  write_text_file(path, gateway_toml(good_config(), dir_.sub("cache")));
  auto r = run({*nfsgw_binary(), "--check-config", path}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(BadConfig, CheckConfigNamesKeyAndValue) {
  for (const auto& c : kCases) {
    std::string path = dir_.sub("bad.toml");
    std::string toml = c.mutate(gateway_toml(good_config(), dir_.sub("cache")));
    ASSERT_NE(toml.find(c.value), std::string::npos) << c.name << ": mutation did not apply";
    write_text_file(path, toml);
    auto r = run({*nfsgw_binary(), "--check-config", path}, std::chrono::seconds(30));
    EXPECT_NE(r.exit_code, 0) << c.name << ":\n" << r.output;
    EXPECT_NE(r.exit_code, -1) << c.name << ": timed out";
    EXPECT_NE(r.output.find(c.key), std::string::npos) << c.name << ": message lacks key '" << c.key << "':\n" << r.output;
    EXPECT_NE(r.output.find(c.value), std::string::npos)
        << c.name << ": message lacks value '" << c.value << "':\n" << r.output;
  }
}

TEST_F(BadConfig, ServeRefusesToStartAndNamesKeyAndValue) {
  for (const auto& c : kCases) {
    std::string path = dir_.sub("bad.toml");
    write_text_file(path, c.mutate(gateway_toml(good_config(), dir_.sub("cache"))));
    auto r = run({*nfsgw_binary(), "--config", path}, std::chrono::seconds(30));
    EXPECT_NE(r.exit_code, 0) << c.name << ":\n" << r.output;
    EXPECT_NE(r.exit_code, -1) << c.name << ": still running after 30 s";
    EXPECT_NE(r.output.find(c.key), std::string::npos) << c.name << ": message lacks key '" << c.key << "':\n" << r.output;
    EXPECT_NE(r.output.find(c.value), std::string::npos)
        << c.name << ": message lacks value '" << c.value << "':\n" << r.output;
  }
}

TEST_F(BadConfig, MissingFileIsReported) {
  auto r = run({*nfsgw_binary(), "--check-config", dir_.sub("does-not-exist.toml")}, std::chrono::seconds(30));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, -1);
  EXPECT_NE(r.output.find("does-not-exist.toml"), std::string::npos) << r.output;
}

}  // namespace
