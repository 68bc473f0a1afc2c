// Every validation error: refused, and the message names the file, the key, the
// bad value and what is allowed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "tests/unit/config/config_test_helpers.h"

using namespace nfsgw::config;
using nfsgw::config::testing::kExport;
using nfsgw::config::testing::message_of;

namespace {

struct Case {
  std::string name;
  std::string toml;
  std::vector<std::string> expect;  // substrings of the message
};

void check(const Case& c) {
  std::string m = message_of(c.toml);
  ASSERT_FALSE(m.empty()) << c.name << ": accepted\n" << c.toml;
  EXPECT_EQ(m.rfind("test.toml", 0), 0u) << c.name << ": " << m;
  for (const auto& s : c.expect) EXPECT_NE(m.find(s), std::string::npos) << c.name << ": missing '" << s << "' in: " << m;
}

std::string exp(const std::string& body) { return "[[export]]\n" + body; }

}  // namespace

TEST(ConfigErrors, UnknownKeysAndTables) {
  for (const auto& c : std::vector<Case>{
           {"top", "servr = 1\n" + kExport, {"servr", "unknown key", "server, cache, export"}},
           {"top table", "[srever]\nx=1\n" + kExport, {"srever", "unknown key"}},
           {"server", "[server]\nnfsport = 2049\n" + kExport, {"server.nfsport", "unknown key", "nfs_port"}},
           {"server sub", "[server.extra]\nx = 1\n" + kExport, {"server.extra", "unknown key"}},
           {"cache", "[cache]\nmemory = 1\n" + kExport, {"cache.memory", "memory_mb"}},
           {"export", kExport + "acess = \"ro\"\n", {"export[0].acess", "unknown key", "access"}},
           {"second export", kExport + exp("path = \"/f\"\norigin = \"nfs://h/f\"\nsquash_uid = 3\n"),
            {"export[1].squash_uid", "anon_uid"}},
       })
    check(c);
}

TEST(ConfigErrors, WrongTypes) {
  for (const auto& c : std::vector<Case>{
           {"port string", "[server]\nnfs_port = \"2049\"\n" + kExport,
            {"server.nfs_port", "expected an integer", "\"2049\"", "1..65535"}},
           {"port float", "[server]\nnfs_port = 2049.0\n" + kExport, {"server.nfs_port", "float 2049"}},
           {"listen int", "[server]\nlisten = 0\n" + kExport, {"server.listen", "expected a string", "integer 0"}},
           {"rpcbind", "[server]\nregister_rpcbind = \"yes\"\n" + kExport,
            {"server.register_rpcbind", "true or false", "\"yes\""}},
           {"threads bool", "[server]\nthreads = true\n" + kExport, {"server.threads", "expected an integer", "true"}},
           {"server not table", "server = 3\n" + kExport, {"server", "expected a table", "integer 3"}},
           {"cache not table", "cache = \"x\"\n" + kExport, {"cache", "expected a table"}},
           {"cache dir", "[cache]\ndir = 5\n" + kExport, {"cache.dir", "expected a string"}},
           {"memory string", "[cache]\nmemory_mb = \"1G\"\n" + kExport, {"cache.memory_mb", "\"1G\""}},
           {"memo string", "[cache]\nanswer_memo = \"off\"\n" + kExport,
            {"cache.answer_memo", "expected true or false", "\"off\""}},
           {"export table", "[export]\npath = \"/e\"\norigin = \"nfs://h/e\"\n", {"export", "expected [[export]]", "a table"}},
           {"export array of ints", "export = [1]\n", {"export[0]", "expected a table", "integer 1"}},
           {"path int", exp("path = 1\norigin = \"nfs://h/e\"\n"), {"export[0].path", "expected a string"}},
           {"clients string", kExport + "clients = \"10.0.0.0/8\"\n",
            {"export[0].clients", "expected an array", "\"10.0.0.0/8\""}},
           {"clients item int", kExport + "clients = [\"10.0.0.0/8\", 7]\n", {"export[0].clients[1]", "integer 7"}},
           {"access bool", kExport + "access = true\n", {"export[0].access", "expected a string"}},
           {"anon_uid neg", kExport + "anon_uid = -1\n", {"export[0].anon_uid", "-1", "0..4294967295"}},
       })
    check(c);
}

TEST(ConfigErrors, OutOfRange) {
  for (const auto& c : std::vector<Case>{
           {"nfs_port 0", "[server]\nnfs_port = 0\n" + kExport, {"server.nfs_port", "0 is out of range", "1..65535"}},
           {"nfs_port big", "[server]\nnfs_port = 65536\n" + kExport, {"server.nfs_port", "65536", "1..65535"}},
           {"mount_port", "[server]\nmount_port = 70000\n" + kExport, {"server.mount_port", "70000", "0..65535"}},
           {"mount_port neg", "[server]\nmount_port = -1\n" + kExport, {"server.mount_port", "-1", "0..65535"}},
           {"threads", "[server]\nthreads = 1025\n" + kExport, {"server.threads", "1025", "0..1024"}},
           {"record small", "[server]\nmax_record_bytes = 65535\n" + kExport,
            {"server.max_record_bytes", "65535", "65536..67108864"}},
           {"record big", "[server]\nmax_record_bytes = 67108865\n" + kExport,
            {"server.max_record_bytes", "67108865", "65536..67108864"}},
           {"memory", "[cache]\nmemory_mb = 15\n" + kExport, {"cache.memory_mb", "15", "16.."}},
           {"anon_gid big", kExport + "anon_gid = 4294967296\n", {"export[0].anon_gid", "4294967296"}},
           {"conn 0", kExport + "upstream_connections = 0\n", {"export[0].upstream_connections", "0 is out", "1..64"}},
           {"conn 65", kExport + "upstream_connections = 65\n", {"export[0].upstream_connections", "65", "1..64"}},
           {"dirty 0", "[cache]\ndirty_max_gb = 0\n" + kExport, {"cache.dirty_max_gb", "0 is out of range", "1..65536"}},
           {"dirty big", "[cache]\ndirty_max_gb = 65537\n" + kExport, {"cache.dirty_max_gb", "65537", "1..65536"}},
           {"delay long", kExport + "write_back_delay = \"25h\"\n", {"export[0].write_back_delay", "25h"}},
           {"delay neg", kExport + "write_back_delay = \"-1s\"\n", {"export[0].write_back_delay", "-1s"}},
       })
    check(c);
}

TEST(ConfigErrors, BadEnumsAndStrings) {
  for (const auto& c : std::vector<Case>{
           {"access", kExport + "access = \"readonly\"\n", {"export[0].access", "\"readonly\"", "\"rw\", \"ro\""}},
           {"squash", kExport + "squash = \"nobody\"\n", {"export[0].squash", "\"nobody\"", "\"none\", \"root\", \"all\""}},
           {"writes", kExport + "writes = \"behind\"\n", {"export[0].writes", "\"behind\"", "\"through\", \"back\""}},
           {"listen host", "[server]\nlisten = \"localhost\"\n" + kExport, {"server.listen", "\"localhost\"", "not an IP address"}},
           {"listen cidr", "[server]\nlisten = \"10.0.0.1/8\"\n" + kExport, {"server.listen", "10.0.0.1/8"}},
           {"empty dir", "[cache]\ndir = \"\"\n" + kExport, {"cache.dir", "empty"}},
           {"empty secret", "[cache]\nsecret_file = \"\"\n" + kExport, {"cache.secret_file", "empty"}},
       })
    check(c);
}

TEST(ConfigErrors, WriteBackNeedsTheMetadataCacheAndWrites) {
  for (const auto& c : std::vector<Case>{
           {"no metadata cache", kExport + "writes = \"back\"\nmetadata_cache = false\n",
            {"export[0]", "writes = \"back\" needs metadata_cache = true"}},
           {"read-only", kExport + "writes = \"back\"\naccess = \"ro\"\n",
            {"export[0]", "writes = \"back\" on an export with access = \"ro\": nothing would be written"}},
       })
    check(c);
  // Each alone is fine.
  EXPECT_EQ(message_of(kExport + "writes = \"through\"\nmetadata_cache = false\naccess = \"ro\"\n"), "");
  EXPECT_EQ(message_of(kExport + "writes = \"back\"\n"), "");
}

TEST(ConfigErrors, BadClients) {
  for (const auto& c : std::vector<Case>{
           {"empty", kExport + "clients = []\n", {"export[0].clients", "empty array"}},
           {"bad address", kExport + "clients = [\"10.0.0.0/8\", \"10.0.0.300/24\"]\n",
            {"export[0].clients[1]", "10.0.0.300/24", "not an IPv4 or IPv6 address"}},
           {"prefix v4", kExport + "clients = [\"10.0.0.0/33\"]\n", {"export[0].clients[0]", "10.0.0.0/33", "0..32"}},
           {"prefix v6", kExport + "clients = [\"fd00::/129\"]\n", {"export[0].clients[0]", "fd00::/129", "0..128"}},
           {"name", kExport + "clients = [\"*.example.com\"]\n", {"export[0].clients[0]", "*.example.com"}},
       })
    check(c);
}

TEST(ConfigErrors, BadOrigins) {
  for (const auto& c : std::vector<Case>{
           {"scheme", exp("path = \"/e\"\norigin = \"nfs4://h/e\"\n"), {"export[0].origin", "nfs4://h/e", "nfs://"}},
           {"host", exp("path = \"/e\"\norigin = \"nfs:///e\"\n"), {"export[0].origin", "no host"}},
           {"path", exp("path = \"/e\"\norigin = \"nfs://h\"\n"), {"export[0].origin", "no export path"}},
           {"param", exp("path = \"/e\"\norigin = \"nfs://h/e?version=4\"\n"),
            {"export[0].origin", "version", "nfsport, mountport"}},
           {"port", exp("path = \"/e\"\norigin = \"nfs://h/e?nfsport=99999\"\n"), {"export[0].origin", "99999", "1..65535"}},
           {"missing", exp("path = \"/e\"\n"), {"export[0].origin", "missing"}},
       })
    check(c);
}

TEST(ConfigErrors, BadExportPaths) {
  auto with_path = [](const std::string& p) { return exp("path = \"" + p + "\"\norigin = \"nfs://h/e\"\n"); };
  for (const auto& c : std::vector<Case>{
           {"relative", with_path("data"), {"export[0].path", "\"data\"", "not absolute"}},
           {"empty", with_path(""), {"export[0].path", "not absolute"}},
           {"dotdot", with_path("/a/../b"), {"export[0].path", "/a/../b", "\"..\""}},
           {"dotdot end", with_path("/a/.."), {"export[0].path", "\"..\""}},
           {"dot", with_path("/a/./b"), {"export[0].path", "\".\""}},
           {"double slash", with_path("/a//b"), {"export[0].path", "\"//\""}},
           {"trailing", with_path("/a/"), {"export[0].path", "ends with"}},
           {"missing", exp("origin = \"nfs://h/e\"\n"), {"export[0].path", "missing"}},
           {"duplicate", kExport + kExport, {"export[1].path", "\"/e\"", "already exported by export[0]"}},
       })
    check(c);
}

TEST(ConfigErrors, NoExports) {
  check({"none", "[server]\nnfs_port = 2049\n", {"export", "no exports"}});
  check({"empty file", "", {"no exports"}});
  check({"empty array", "export = []\n", {"export", "no exports"}});
}

TEST(ConfigErrors, ExportIdCollision) {
  // A FNV-1a 32-bit collision found by brute force: both paths hash to 24102731.
  const std::string a = "/x1062789", b = "/x1279192";
  std::string m = message_of(exp("path = \"" + a + "\"\norigin = \"nfs://h/a\"\n") +
                             exp("path = \"" + b + "\"\norigin = \"nfs://h/b\"\n"));
  ASSERT_FALSE(m.empty());
  EXPECT_NE(m.find("export[1].path"), std::string::npos) << m;
  EXPECT_NE(m.find("same export id"), std::string::npos) << m;
  EXPECT_NE(m.find(a), std::string::npos) << m;
}

TEST(ConfigErrors, SyntaxErrorCarriesLine) {
  std::string m = message_of("[server]\nnfs_port = 2049\nlisten = \"0.0.0.0\n" + kExport);
  ASSERT_FALSE(m.empty());
  EXPECT_NE(m.find("TOML syntax error"), std::string::npos) << m;
  EXPECT_NE(m.find("test.toml:3"), std::string::npos) << m;
  std::string dup = message_of("[server]\nnfs_port = 1\nnfs_port = 2\n" + kExport);
  EXPECT_NE(dup.find("TOML syntax error"), std::string::npos) << dup;
}

TEST(ConfigErrors, ErrorsCarryTheLineOfTheValue) {
  std::string m = message_of("[server]\n\nthreads = 5000\n" + kExport);
  EXPECT_NE(m.find("test.toml:3: server.threads"), std::string::npos) << m;
}

TEST(ConfigErrors, EachMessageNamesItsPlaceOnce) {
  for (const std::string& toml : {kExport + "clients = [\"10.0.0.0/8\", 7]\n",
                                  kExport + "clients = [\"10.0.0.0/33\"]\n",
                                  exp("path = \"/e\"\norigin = 5\n"),
                                  exp("path = \"/e\"\norigin = \"nfs:///e\"\n")}) {
    const std::string m = message_of(toml);
    EXPECT_EQ(m.find("test.toml"), m.rfind("test.toml")) << m;
  }
}
