// Two nfsgw nodes behind HAProxy in TCP mode on loopback: the same secret file and
// the same export, each its own cache directory. Clients walk a tree and read a
// large file through the balancer while node A serves them; node A is stopped
// (SIGTERM, or kill -9) in the middle; the clients finish through node B, which has
// never seen their handles, without NFS3ERR_STALE or NFS3ERR_BADHANDLE and with
// every byte equal to the origin's (SHA-256).
//
// Two libnfs clients (its raw RPC API) run at once, each behaving as a hard mount:
// on a broken connection it connects again through the balancer and sends the same
// call again, with the same handle, as a hard-mounted kernel client does:
//  - one reads the large file (READs of 256 KiB) with the handle node A gave;
//  - one walks the tree by handle (READDIRPLUS, READ), keeping every handle it got
//    from node A.
// (libnfs 4.0's high-level API with nfs_set_autoreconnect(-1) was tried for the
// read first: its nfs_pread failed with "nfs_service failed" when node A's
// connection was cut, instead of reconnecting.)
// HAProxy sends everything to A while A is up (B is a backup server): so A served
// the first part, and after the stop only B can have served the rest.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/file_digest.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;
using Clock = std::chrono::steady_clock;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

constexpr int kTopDirs = 6, kSubDirs = 6, kFilesPerDir = 8;  // 36 folders, 288 files
constexpr int kAllDirs = 1 + kTopDirs + kTopDirs * kSubDirs;
constexpr int kPauseAfterDirs = 14;
constexpr std::uint64_t kBigSize = 160ull << 20;
constexpr std::uint32_t kChunk = 256 * 1024;

std::string file_content(const std::string& rel) {
  std::string s = "two nodes: " + rel + "\n";
  while (s.size() < 300) s += s;  // a few hundred bytes, different per file
  return s;
}

/// The tree on the origin (written once per binary): relative path -> content for
/// files, "" for folders.
const std::map<std::string, std::string>& origin_tree() {
  static const std::map<std::string, std::string> tree = [] {
    std::map<std::string, std::string> t;
    const std::string base = shared_origin().export_dir() + "/nodes";
    make_dirs(base);
    for (int a = 0; a < kTopDirs; ++a) {
      const std::string da = "d" + std::to_string(a);
      make_dirs(base + "/" + da);
      t[da] = "";
      for (int b = 0; b < kSubDirs; ++b) {
        const std::string db = da + "/s" + std::to_string(b);
        make_dirs(base + "/" + db);
        t[db] = "";
        for (int f = 0; f < kFilesPerDir; ++f) {
          const std::string rel = db + "/f" + std::to_string(f);
          std::ofstream(base + "/" + rel) << file_content(rel);
          t[rel] = file_content(rel);
        }
      }
    }
    write_random_file(shared_origin().export_dir() + "/nodes_big", kBigSize, 4242);
    return t;
  }();
  return tree;
}

/// HAProxy in TCP mode: A as the server, B as its backup; a node that refuses
/// connections is marked down within a check (200 ms) and sessions to it are cut.
class Balancer {
 public:
  Balancer(const std::string& dir, std::uint16_t front, std::uint16_t a, std::uint16_t b)
      : cfg_(dir + "/haproxy.cfg") {
    std::ofstream(cfg_) << "global\n"
                           "  maxconn 256\n"
                           "defaults\n"
                           "  mode tcp\n"
                           "  timeout connect 1s\n"
                           "  timeout client 10m\n"
                           "  timeout server 10m\n"
                           "  retries 3\n"
                           "  option redispatch\n"
                           "frontend nfs\n"
                           "  bind 127.0.0.1:" << front << "\n"
                           "  default_backend nfsgw\n"
                           "backend nfsgw\n"
                           "  server a 127.0.0.1:" << a << " check inter 200ms fall 1 rise 2 on-marked-down shutdown-sessions\n"
                           "  server b 127.0.0.1:" << b << " check inter 200ms fall 1 rise 2 backup\n";
    const auto check = run({"haproxy", "-c", "-f", cfg_}, std::chrono::seconds(20));
    if (check.exit_code != 0) throw std::runtime_error("haproxy -c refused the config:\n" + check.output);
    proc_ = std::make_unique<Process>(std::vector<std::string>{"haproxy", "-db", "-f", cfg_}, dir + "/haproxy.log");
    if (!wait_for_port(front, 10000, proc_.get())) throw std::runtime_error("haproxy did not listen:\n" + proc_->log());
  }
  ~Balancer() { proc_->stop(std::chrono::seconds(5)); }
  std::string log() const { return proc_->log(); }

 private:
  std::string cfg_;
  std::unique_ptr<Process> proc_;
};

void write_secret(const std::string& path) {
  std::mt19937_64 rng(std::random_device{}());
  std::string s;
  for (int i = 0; i < 32; ++i) s.push_back(static_cast<char>(rng()));
  std::ofstream(path) << s;
  ::chmod(path.c_str(), 0600);
}

GatewayConfig node_config(std::uint16_t port, const std::string& secret) {
  GatewayConfig cfg;
  cfg.port = port;
  cfg.origin_url = shared_origin().url();
  cfg.secret_file = secret;
  return cfg;
}

/// What the two clients saw.
struct Outcome {
  std::mutex mu;
  std::vector<std::string> errors;
  void fail(const std::string& e) {
    std::lock_guard l(mu);
    if (errors.size() < 20) errors.push_back(e);
  }
};

/// A raw NFSv3 connection through the balancer that, like a hard mount, connects
/// again and repeats a call that failed on the transport (bounded: 90 s a call).
class HardClient {
 public:
  explicit HardClient(std::uint16_t port) : port_(port) {}
  std::atomic<int> reconnects{0};

  template <typename R>
  R call(const std::function<R(RawNfsConnection&)>& op) {
    R r;
    const auto answered = [&] {
      if (!connected_) {
        conn_ = std::make_unique<RawNfsConnection>();
        conn_->timeout_ms = 20000;
        connected_ = conn_->connect(port_, kNfsProgram, 3);
        if (connected_) conn_->set_credentials(0, 0);
      }
      if (!connected_) return false;
      r = op(*conn_);
      if (r.transport_ok) return true;
      connected_ = false;
      ++reconnects;
      return false;
    };
    if (nfsgw::test::wait_until(answered, std::chrono::seconds(90), "an answer through the balancer",
                                std::chrono::milliseconds(100)))
      return r;
    R none;
    none.error = "no answer through the balancer for 90 s";
    return none;
  }

 private:
  std::uint16_t port_;
  bool connected_ = false;
  std::unique_ptr<RawNfsConnection> conn_;
};

/// Walks the tree under `top` by handle; records every path seen and checks each
/// file's size and contents. `progress` counts folders done; after `failover` is
/// set, `old_handle_calls` counts calls made with a handle obtained before it.
void walk(std::uint16_t port, const Handle& top, Outcome& out, std::atomic<int>& progress,
          const std::atomic<bool>& failover, std::atomic<int>& old_handle_calls, std::set<std::string>& seen) {
  HardClient c(port);
  struct Dir {
    std::string rel;
    Handle fh;
    bool before;  // obtained before the failover
  };
  std::deque<Dir> todo{{"", top, true}};
  const auto& tree = origin_tree();
  // Files at most one every 2 ms: the walk lasts long enough for node A's stop to
  // fall in it.
  nfsgw::test::Pacer pace(std::chrono::milliseconds(2));
  while (!todo.empty()) {
    Dir d = todo.front();
    todo.pop_front();
    if (failover && d.before) ++old_handle_calls;
    auto list = c.call<RawReaddirPlus>([&](RawNfsConnection& k) { return k.readdirplus_all(d.fh, 1024, 4096); });
    if (!list.transport_ok || list.status != kNfs3Ok) {
      out.fail("READDIRPLUS " + d.rel + ": status " + std::to_string(list.status) + " " + list.error);
      continue;
    }
    for (const auto& e : list.entries) {
      if (e.name == "." || e.name == "..") continue;
      const std::string rel = d.rel.empty() ? e.name : d.rel + "/" + e.name;
      seen.insert(rel);
      if (e.handle.empty()) {
        out.fail("no handle for " + rel);
        continue;
      }
      const auto it = tree.find(rel);
      if (it == tree.end()) continue;
      const bool before = !failover;
      if (it->second.empty()) {
        todo.push_back({rel, e.handle, before});
        continue;
      }
      // A file: its handle is used later, some of them after the failover.
      pace.next();
      if (failover && before) ++old_handle_calls;
      auto r = c.call<RawRead>([&](RawNfsConnection& k) { return k.read(e.handle, 0, 4096); });
      if (!r.transport_ok || r.status != kNfs3Ok) {
        out.fail("READ " + rel + ": status " + std::to_string(r.status) + " " + r.error);
      } else if (std::string(r.data.begin(), r.data.end()) != it->second) {
        out.fail("READ " + rel + ": wrong bytes");
      }
    }
    ++progress;
    // A third of the walk through node A, then wait (bounded) for its stop: the
    // rest, with the handles node A gave, goes to node B.
    if (progress == kPauseAfterDirs)
      (void)nfsgw::test::wait_until([&] { return failover.load(); }, std::chrono::seconds(120), "node A's stop");
  }
}

enum class Stop { Term, Kill };

void failover_run(Stop how) {
  const auto& tree = origin_tree();
  const std::string want_big = sha256_file(shared_origin().export_dir() + "/nodes_big");
  TempDir dir(how == Stop::Term ? "nodes-term" : "nodes-kill");
  write_secret(dir.sub("secret"));
  Gateway a(node_config(kGatewayPort, dir.sub("secret")), dir.sub("a"));
  Gateway b(node_config(kSecondGatewayPort, dir.sub("secret")), dir.sub("b"));
  ASSERT_NO_THROW(a.start());
  ASSERT_NO_THROW(b.start());
  std::unique_ptr<Balancer> lb;
  ASSERT_NO_THROW(lb = std::make_unique<Balancer>(dir.path(), kBalancerPort, a.port(), b.port()));

  // MNT through the balancer: A answers (the root handle is the same on B anyway).
  auto m = mount_root(kBalancerPort, "/export");
  ASSERT_TRUE(m.transport_ok && m.status == 0) << m.error << "\n" << lb->log();
  Handle top, big;
  {
    RawNfsConnection c;
    ASSERT_TRUE(c.connect(kBalancerPort, kNfsProgram, 3)) << c.error();
    auto l = c.lookup(m.root, "nodes");
    ASSERT_EQ(l.status, kNfs3Ok) << l.error;
    top = l.handle;
    l = c.lookup(m.root, "nodes_big");
    ASSERT_EQ(l.status, kNfs3Ok) << l.error;
    big = l.handle;
  }

  Outcome out;
  std::atomic<bool> failover{false};
  std::atomic<int> dirs_done{0}, old_handle_calls{0};
  std::atomic<std::uint64_t> big_read{0};
  std::set<std::string> seen;
  std::string got_big;
  int reader_reconnects = 0;

  std::thread walker([&] { walk(kBalancerPort, top, out, dirs_done, failover, old_handle_calls, seen); });
  std::thread reader([&] {
    HardClient c(kBalancerPort);
    Sha256 sha;
    std::uint64_t off = 0;
    nfsgw::test::Pacer slowly(std::chrono::milliseconds(5));
    const auto deadline = Clock::now() + std::chrono::minutes(5);
    while (off < kBigSize && Clock::now() < deadline) {
      auto r = c.call<RawRead>([&](RawNfsConnection& k) { return k.read(big, off, kChunk); });
      if (!r.transport_ok || r.status != kNfs3Ok) {
        out.fail("READ of the large file at " + std::to_string(off) + ": status " + std::to_string(r.status) + " " +
                 r.error);
        break;
      }
      if (r.data.empty()) break;
      sha.update(r.data.data(), r.data.size());
      off += r.data.size();
      big_read = off;
      // A quarter through node A at full speed; then slowly, and at most to three
      // quarters, until node A is stopped: its stop falls in the middle of the file.
      if (!failover && off >= kBigSize / 4) {
        slowly.next();
        if (off >= 3 * kBigSize / 4)
          (void)nfsgw::test::wait_until([&] { return failover.load(); }, std::chrono::seconds(120), "node A's stop");
      }
    }
    reader_reconnects = c.reconnects;
    got_big = sha.hex();
  });

  // Stop A once both clients are well under way through it.
  (void)nfsgw::test::wait_until([&] { return big_read >= kBigSize / 4 && dirs_done >= kPauseAfterDirs; },
                                std::chrono::seconds(120), "both clients under way through node A");
  const std::uint64_t read_before = big_read;
  const int dirs_before = dirs_done;
  failover = true;
  if (how == Stop::Term) {
    EXPECT_EQ(a.stop(), 0) << a.log();
  } else {
    EXPECT_EQ(a.kill9(), 137);
  }
  walker.join();
  reader.join();

  EXPECT_GE(read_before, kBigSize / 4) << "the stop came too early";
  EXPECT_LT(read_before, kBigSize) << "the large read was over before node A stopped";
  EXPECT_LT(dirs_before, kAllDirs) << "the walk was over before node A stopped";
  EXPECT_GT(old_handle_calls.load(), 0) << "no handle from node A was used on node B";
  EXPECT_GT(reader_reconnects, 0) << "the large read never had to reconnect";
  for (const auto& e : out.errors) ADD_FAILURE() << e;
  EXPECT_EQ(big_read.load(), kBigSize);
  EXPECT_EQ(got_big, want_big) << "the large file's bytes differ from the origin's";
  std::set<std::string> want;
  for (const auto& [rel, content] : tree) want.insert(rel);
  EXPECT_EQ(seen, want) << "the walk did not see the origin's tree";
  EXPECT_TRUE(b.running());
  if (::testing::Test::HasFailure()) {
    ADD_FAILURE() << "node A log:\n" << a.log() << "\nnode B log:\n" << b.log() << "\nhaproxy:\n" << lb->log();
  }
}

TEST(TwoNodes, HandlesAreTheSameOnBothNodes) {
  INTEG_REQUIRE_NFSGW();
  origin_tree();
  TempDir dir("nodes-same");
  write_secret(dir.sub("secret"));
  Gateway a(node_config(kGatewayPort, dir.sub("secret")), dir.sub("a"));
  Gateway b(node_config(kSecondGatewayPort, dir.sub("secret")), dir.sub("b"));
  ASSERT_NO_THROW(a.start());
  ASSERT_NO_THROW(b.start());
  auto ma = mount_root(a.port(), "/export"), mb = mount_root(b.port(), "/export");
  ASSERT_EQ(ma.status, 0u);
  ASSERT_EQ(mb.status, 0u);
  EXPECT_EQ(ma.root, mb.root);
  RawNfsConnection ca, cb;
  ASSERT_TRUE(ca.connect(a.port(), kNfsProgram, 3));
  ASSERT_TRUE(cb.connect(b.port(), kNfsProgram, 3));
  // Handles A gives, used first on B (which has never seen them), then compared
  // with the ones B gives itself.
  Handle dir_a = ca.lookup(ma.root, "nodes").handle;
  for (const char* step : {"d3", "s4"}) dir_a = ca.lookup(dir_a, step).handle;
  auto file_a = ca.lookup(dir_a, "f5");
  ASSERT_EQ(file_a.status, kNfs3Ok);
  std::printf("origin handles here: the gateway's handle of a file is %zu bytes\n", file_a.handle.size());
  auto on_b = cb.read(file_a.handle, 0, 4096);
  ASSERT_EQ(on_b.status, kNfs3Ok) << "node B refused a handle of node A";
  EXPECT_EQ(std::string(on_b.data.begin(), on_b.data.end()), file_content("d3/s4/f5"));
  auto listing = cb.readdirplus_all(dir_a);
  ASSERT_EQ(listing.status, kNfs3Ok);
  Handle dir_b = cb.lookup(mb.root, "nodes").handle;
  for (const char* step : {"d3", "s4"}) dir_b = cb.lookup(dir_b, step).handle;
  EXPECT_EQ(dir_b, dir_a);
  EXPECT_EQ(cb.lookup(dir_b, "f5").handle, file_a.handle);
  // Positive control: a node with another secret refuses A's handle.
  TempDir other("nodes-other");
  write_secret(other.sub("secret"));
  a.stop();
  Gateway c(node_config(kGatewayPort, other.sub("secret")), other.sub("c"));
  ASSERT_NO_THROW(c.start());
  RawNfsConnection cc;
  ASSERT_TRUE(cc.connect(c.port(), kNfsProgram, 3));
  EXPECT_EQ(cc.read(file_a.handle, 0, 16).status, kNfs3BadHandle);
}

TEST(TwoNodes, ClientsFinishThroughNodeBAfterSigterm) {
  INTEG_REQUIRE_NFSGW();
  failover_run(Stop::Term);
}

TEST(TwoNodes, ClientsFinishThroughNodeBAfterKill9) {
  INTEG_REQUIRE_NFSGW();
  failover_run(Stop::Kill);
}

}  // namespace
