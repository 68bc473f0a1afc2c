// nfsgw over an emulated WAN: origin ganesha <- wan-emu <- nfsgw <- libnfs raw client.
// wan-emu counts every RPC call that reaches the origin and plays the WAN's faults
// (delay, cut/restore), so these tests state what a client call costs upstream and
// how the gateway behaves when the far link misbehaves. The gateway here runs as a
// pure pass-through: its export has `metadata_cache = false`, so
//  - one client LOOKUP (or GETATTR) costs exactly one origin call, and nothing else
//    is sent: the baseline the metadata cache is measured against
//    (metadata_cache_test states what the cache saves);
//  - an outage makes client calls wait (hard-mount behaviour), not fail, and they
//    complete once the link is back;
//  - calls are pipelined to the origin: 64 LOOKUPs in flight over a 40 ms RTT link
//    take a few round trips, not 64.
#include <gtest/gtest.h>
// clang-format off
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>
// clang-format on
#include <poll.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wan_relay.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kLookupKey = nfs3_key(3);
const std::string kGetattrKey = nfs3_key(1);

/// Everything the tests of this binary share: the origin, the relay in front of it
/// and one pass-through nfsgw whose origin URL points at the relay.
struct WanSetup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<WanRelay> relay;
  std::unique_ptr<Gateway> gateway;
  std::string skip_reason;  // set when a binary is missing: every test fails
};

WanSetup& setup() {
  static WanSetup s;
  return s;
}

class WanEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto& s = setup();
    if (!nfsgw_binary()) {
      s.skip_reason = "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";
      return;
    }
    if (!wan_emu_binary()) {
      s.skip_reason = "wan-emu binary not found (build target wan-emu or set WAN_EMU_BIN)";
      return;
    }
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kWanOriginNfsPort, kWanOriginMountPort);
      s.origin->start();
      s.dir = std::make_unique<TempDir>("wan");
      s.relay = std::make_unique<WanRelay>(
          std::vector<std::pair<std::uint16_t, std::uint16_t>>{{kWanRelayNfsPort, kWanOriginNfsPort},
                                                               {kWanRelayMountPort, kWanOriginMountPort}},
          kWanRelayControlPort, s.dir->sub("relay.log"));
      GatewayConfig cfg;
      cfg.port = kWanGatewayPort;
      cfg.origin_url = "nfs://127.0.0.1" + s.origin->export_dir() + "?nfsport=" + std::to_string(kWanRelayNfsPort) +
                       "&mountport=" + std::to_string(kWanRelayMountPort);
      cfg.upstream_connections = 4;
      // The pass-through path: every call is forwarded, nothing is answered from
      // a metadata cache.
      cfg.metadata.enabled = false;
      s.gateway = std::make_unique<Gateway>(cfg, s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }

  void TearDown() override {
    auto& s = setup();
    if (s.gateway) {
      int code = s.gateway->stop();
      EXPECT_EQ(code, 0) << "nfsgw did not stop cleanly on SIGTERM; log:\n" << s.gateway->log();
    }
    s.gateway.reset();
    s.relay.reset();
    s.dir.reset();
    s.origin.reset();  // stops ganesha, removes its directories
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new WanEnvironment);

/// Sends one control command to the relay; the answer line (exit status checked).
std::string relay_ctl(const std::vector<std::string>& cmd) {
  bool ok = false;
  std::string answer = setup().relay->ctl(cmd, &ok);
  EXPECT_TRUE(ok) << "wan-emu --ctl " << cmd.front() << ": " << answer;
  return answer;
}

/// The relay's per-procedure counters; a stats line without "procs" fails the
/// calling test (ok = false).
ProcCounts relay_procs(bool* ok) {
  auto procs = setup().relay->procs();
  *ok = procs.has_value();
  return procs.value_or(ProcCounts{});
}

/// Leaves the relay as the next test expects it, whatever this test did.
struct RelayRestorer {
  ~RelayRestorer() {
    if (!setup().relay) return;
    relay_ctl({"restore"});
    relay_ctl({"delay", "0"});
  }
};

ino_t disk_ino(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

class Wan : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!setup().skip_reason.empty()) FAIL() << setup().skip_reason;
    ASSERT_TRUE(setup().gateway && setup().gateway->running()) << "environment did not start";
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_name_ = "d_" + name;
    disk_dir_ = setup().origin->export_dir() + "/" + dir_name_;
    make_dirs(disk_dir_);
    // Warm mount: MNT, a connection to nfsgw and the test directory's handle.
    auto root = mount_root(kWanGatewayPort, "/export");
    ASSERT_TRUE(root.transport_ok && root.status == 0) << root.error << "\n" << setup().gateway->log();
    root_ = root.root;
    ASSERT_TRUE(conn_.connect(kWanGatewayPort, kNfsProgram, 3)) << conn_.error();
    auto d = conn_.lookup(root_, dir_name_);
    ASSERT_TRUE(d.transport_ok) << d.error;
    ASSERT_EQ(d.status, 0u);
    dir_ = d.handle;
  }

  void make_file(const std::string& name, const std::string& content) {
    std::ofstream(disk_dir_ + "/" + name) << content;
  }

  std::string dir_name_, disk_dir_;
  Handle root_, dir_;
  RawNfsConnection conn_;
  RelayRestorer restorer_;
};

// Baseline: with the metadata cache switched off, every client LOOKUP is one
// origin LOOKUP, whether the name exists or not and however often it was asked
// before; and the gateway adds no other origin traffic of its own.
TEST_F(Wan, EachLookupCostsExactlyOneOriginCall) {
  constexpr int kExisting = 20;
  for (int i = 0; i < kExisting; ++i) make_file("f" + std::to_string(i), "x");
  // 20 distinct existing, 10 repeats of existing, 10 distinct missing, 10 repeats
  // of missing: 50 LOOKUPs.
  std::vector<std::pair<std::string, bool>> names;  // name, exists
  for (int i = 0; i < kExisting; ++i) names.push_back({"f" + std::to_string(i), true});
  for (int i = 0; i < 10; ++i) names.push_back({"f" + std::to_string(i * 2), true});
  for (int i = 0; i < 10; ++i) names.push_back({"missing" + std::to_string(i), false});
  for (int i = 0; i < 10; ++i) names.push_back({"missing" + std::to_string(i % 3), false});
  const long n = static_cast<long>(names.size());
  ASSERT_EQ(n, 50);

  relay_ctl({"reset"});
  for (const auto& [name, exists] : names) {
    auto r = conn_.lookup(dir_, name);
    ASSERT_TRUE(r.transport_ok) << name << ": " << r.error;
    if (exists) {
      ASSERT_EQ(r.status, 0u) << name;
      EXPECT_EQ(r.fileid, disk_ino(disk_dir_ + "/" + name)) << name;
    } else {
      EXPECT_EQ(r.status, kNfs3ErrNoent) << name;
    }
  }
  bool ok = false;
  auto procs = relay_procs(&ok);
  ASSERT_TRUE(ok) << "no procs in the relay's stats";
  EXPECT_EQ(procs[kLookupKey].calls, n) << describe(procs);
  EXPECT_EQ(procs[kLookupKey].replies, n) << describe(procs);
  for (const auto& [key, count] : procs) {
    if (key != kLookupKey) {
      EXPECT_EQ(count.calls, 0) << "unexpected origin calls of " << key << ": " << describe(procs);
    }
  }
}

// The same for GETATTR: with the metadata cache off, N client GETATTRs (distinct
// and repeated handles) are N origin GETATTRs and nothing else.
TEST_F(Wan, EachGetattrCostsExactlyOneOriginCall) {
  constexpr int kFiles = 10;
  std::vector<Handle> handles;
  std::vector<ino_t> inos;
  for (int i = 0; i < kFiles; ++i) {
    std::string name = "g" + std::to_string(i);
    make_file(name, std::string(static_cast<std::size_t>(i) + 1, 'a'));
    auto r = conn_.lookup(dir_, name);
    ASSERT_TRUE(r.transport_ok && r.status == 0) << name << ": " << r.error;
    handles.push_back(r.handle);
    inos.push_back(disk_ino(disk_dir_ + "/" + name));
  }
  relay_ctl({"reset"});
  constexpr long kCalls = 50;  // each handle 5 times, interleaved
  for (long c = 0; c < kCalls; ++c) {
    std::size_t i = static_cast<std::size_t>(c % kFiles);
    auto a = conn_.getattr(handles[i]);
    ASSERT_TRUE(a.transport_ok) << a.error;
    ASSERT_EQ(a.status, 0u);
    EXPECT_EQ(a.fileid, inos[i]);
    EXPECT_EQ(a.size, i + 1);
  }
  bool ok = false;
  auto procs = relay_procs(&ok);
  ASSERT_TRUE(ok) << "no procs in the relay's stats";
  EXPECT_EQ(procs[kGetattrKey].calls, kCalls) << describe(procs);
  EXPECT_EQ(procs[kGetattrKey].replies, kCalls) << describe(procs);
  for (const auto& [key, count] : procs) {
    if (key != kGetattrKey) {
      EXPECT_EQ(count.calls, 0) << "unexpected origin calls of " << key << ": " << describe(procs);
    }
  }
}

/// A raw call run on its own thread and connection, so the test can watch whether
/// it has finished while the link is cut.
template <typename Result>
struct BackgroundCall {
  std::atomic<bool> done{false};
  std::future<Result> result;

  template <typename Fn>
  explicit BackgroundCall(Fn fn) {
    result = std::async(std::launch::async, [this, fn] {
      RawNfsConnection c;
      c.timeout_ms = 120000;  // longer than the test waits: a hang is seen by the test
      Result r;
      if (!c.connect(kWanGatewayPort, kNfsProgram, 3)) {
        r.error = "connect: " + c.error();
      } else {
        r = fn(c);
      }
      done = true;
      return r;
    });
  }
};

// An outage of the far link: calls issued while it is cut neither complete nor
// fail; they wait, and complete correctly once the link is restored. The calls
// are chosen so no cache could answer them: READ of a file never read, LOOKUP of
// a name created during the outage, and GETATTR (the metadata cache is off).
TEST_F(Wan, CutLinkMakesCallsWaitThenCompleteOnRestore) {
  const std::string content = "contents that must come from the origin";
  make_file("r", content);
  auto file = conn_.lookup(dir_, "r");
  ASSERT_TRUE(file.transport_ok && file.status == 0) << file.error;
  const Handle fh = file.handle;
  const Handle dir = dir_;

  relay_ctl({"cut"});
  make_file("born_during_cut", "y");
  BackgroundCall<RawRead> read([fh](RawNfsConnection& c) { return c.read(fh, 0, 4096); });
  BackgroundCall<RawAttr> attr([fh](RawNfsConnection& c) { return c.getattr(fh); });
  BackgroundCall<RawLookup> lookup([dir](RawNfsConnection& c) { return c.lookup(dir, "born_during_cut"); });

  nfsgw::test::pass_time(std::chrono::seconds(2), "an outage of 2 s, through which the calls wait");
  EXPECT_FALSE(read.done) << "READ finished during the outage";
  EXPECT_FALSE(attr.done) << "GETATTR finished during the outage";
  EXPECT_FALSE(lookup.done) << "LOOKUP finished during the outage";

  auto restored_at = Clock::now();
  relay_ctl({"restore"});
  const auto bound = std::chrono::seconds(60);
  ASSERT_EQ(read.result.wait_for(bound), std::future_status::ready) << "READ not done 60 s after restore";
  ASSERT_EQ(attr.result.wait_for(bound), std::future_status::ready) << "GETATTR not done 60 s after restore";
  ASSERT_EQ(lookup.result.wait_for(bound), std::future_status::ready) << "LOOKUP not done 60 s after restore";
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - restored_at);

  auto r = read.result.get();
  ASSERT_TRUE(r.transport_ok) << r.error << "\n" << setup().gateway->log();
  ASSERT_EQ(r.status, 0u);
  EXPECT_EQ(std::string(r.data.begin(), r.data.end()), content);
  EXPECT_TRUE(r.eof);
  auto a = attr.result.get();
  ASSERT_TRUE(a.transport_ok) << a.error;
  ASSERT_EQ(a.status, 0u);
  EXPECT_EQ(a.fileid, disk_ino(disk_dir_ + "/r"));
  EXPECT_EQ(a.size, content.size());
  auto l = lookup.result.get();
  ASSERT_TRUE(l.transport_ok) << l.error;
  ASSERT_EQ(l.status, 0u);
  EXPECT_EQ(l.fileid, disk_ino(disk_dir_ + "/born_during_cut"));
  std::cout << "[ measure  ] calls completed " << took.count() << " ms after restore\n";
}

/// Issues all LOOKUPs at once on one rpc_context (one TCP connection to nfsgw)
/// and services it until every reply is in or `deadline` passes. Returns, per
/// name, the NFS status (or -1 when no reply / transport failure).
std::vector<long> lookups_in_flight(std::uint16_t port, const Handle& dir, const std::vector<std::string>& names,
                                    milliseconds deadline, std::string* error) {
  struct Slot {
    long status = -1;
    bool done = false;
    int* remaining = nullptr;
  };
  std::vector<long> out(names.size(), -1);
  rpc_context* rpc = rpc_init_context();
  if (!rpc) {
    *error = "rpc_init_context failed";
    return out;
  }
  std::unique_ptr<rpc_context, void (*)(rpc_context*)> guard(rpc, rpc_destroy_context);
  bool connected = false, connect_done = false;
  struct ConnectState {
    bool* ok;
    bool* done;
  } cs{&connected, &connect_done};
  auto connect_cb = [](rpc_context*, int status, void*, void* priv) {
    auto* s = static_cast<ConnectState*>(priv);
    *s->ok = status == RPC_STATUS_SUCCESS;
    *s->done = true;
  };
  if (rpc_connect_port_async(rpc, "127.0.0.1", port, NFS_PROGRAM, NFS_V3, connect_cb, &cs) != 0) {
    *error = std::string("connect: ") + (rpc_get_error(rpc) ? rpc_get_error(rpc) : "failed");
    return out;
  }
  auto until = Clock::now() + deadline;
  auto service = [&](const std::function<bool()>& finished) {
    while (!finished()) {
      auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
      if (left <= 0) return false;
      pollfd pfd{rpc_get_fd(rpc), static_cast<short>(rpc_which_events(rpc)), 0};
      int n = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left, 100)));
      if (n < 0) return false;
      if (rpc_service(rpc, n > 0 ? pfd.revents : 0) < 0) return finished();
    }
    return true;
  };
  if (!service([&] { return connect_done; }) || !connected) {
    *error = std::string("connect: ") + (rpc_get_error(rpc) ? rpc_get_error(rpc) : "timed out");
    return out;
  }
  int remaining = static_cast<int>(names.size());
  std::vector<Slot> slots(names.size());
  std::vector<std::string> name_copies = names;
  auto cb = [](rpc_context*, int status, void* data, void* priv) {
    auto* s = static_cast<Slot*>(priv);
    if (status == RPC_STATUS_SUCCESS) s->status = static_cast<LOOKUP3res*>(data)->status;
    s->done = true;
    --*s->remaining;
  };
  for (std::size_t i = 0; i < names.size(); ++i) {
    slots[i].remaining = &remaining;
    LOOKUP3args args{};
    args.what.dir.data.data_len = static_cast<u_int>(dir.size());
    args.what.dir.data.data_val = const_cast<char*>(reinterpret_cast<const char*>(dir.data()));
    args.what.name = name_copies[i].data();
    if (rpc_nfs3_lookup_async(rpc, cb, &args, &slots[i]) != 0) {
      *error = "queueing LOOKUP " + names[i] + ": " + (rpc_get_error(rpc) ? rpc_get_error(rpc) : "failed");
      // Already queued calls still reference slots: drain them before returning.
      slots[i].done = true;
      --remaining;
      for (std::size_t k = i + 1; k < names.size(); ++k) slots[k].done = true, --remaining;
      break;
    }
  }
  if (!service([&] { return remaining == 0; }) && error->empty()) {
    *error = "not every LOOKUP answered before the deadline; " + std::to_string(remaining) + " missing";
  }
  for (std::size_t i = 0; i < names.size(); ++i) out[i] = slots[i].done ? slots[i].status : -1;
  // Destroying the context (guard) cancels what is left, calling back with
  // RPC_STATUS_CANCEL while `slots` still exists.
  guard.reset();
  return out;
}

// Over a 40 ms round trip, one LOOKUP takes at least 40 ms; 64 LOOKUPs sent at
// once must overlap upstream (pipelined over the gateway's pool), so they finish
// in a fraction of the 64 x 40 ms a one-at-a-time gateway would need.
TEST_F(Wan, LookupsInFlightArePipelinedOverTheDelayedLink) {
  constexpr int kCalls = 64;
  std::vector<std::string> names;
  for (int i = 0; i < kCalls; ++i) {
    names.push_back("p" + std::to_string(i));
    make_file(names.back(), "z");
  }
  relay_ctl({"delay", "20"});
  // Warm every upstream connection through the delayed link, then time one call.
  for (int i = 0; i < 4; ++i) ASSERT_EQ(conn_.lookup(dir_, names[static_cast<std::size_t>(i)]).status, 0u);
  auto t0 = Clock::now();
  auto one = conn_.lookup(dir_, names[0]);
  auto single = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
  ASSERT_TRUE(one.transport_ok && one.status == 0) << one.error;
  // Proves the delay is really in the path (otherwise the bound below is empty).
  EXPECT_GE(single.count(), 40) << "one LOOKUP over a 2 x 20 ms link took " << single.count() << " ms";

  relay_ctl({"reset"});
  std::string error;
  auto start = Clock::now();
  auto statuses = lookups_in_flight(kWanGatewayPort, dir_, names, std::chrono::seconds(60), &error);
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  ASSERT_TRUE(error.empty()) << error;
  for (int i = 0; i < kCalls; ++i) EXPECT_EQ(statuses[static_cast<std::size_t>(i)], 0) << names[static_cast<std::size_t>(i)];
  const long serial_ms = kCalls * 40;
  EXPECT_LT(took.count(), serial_ms / 4) << kCalls << " LOOKUPs in flight took " << took.count()
                                         << " ms; one at a time would take " << serial_ms << " ms";
  bool ok = false;
  auto procs = relay_procs(&ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(procs[kLookupKey].calls, kCalls) << describe(procs);
  std::cout << "[ measure  ] single LOOKUP " << single.count() << " ms; " << kCalls << " in flight " << took.count()
            << " ms (serial would be >= " << serial_ms << " ms)\n";
}

}  // namespace
