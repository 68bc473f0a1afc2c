// Hostile NLM input against nfsgw's lock service (issue 21), in front of a real
// origin lock manager (nfs-ganesha with NLM on, the host's rpc.statd):
//   - malformed arguments of every NLM procedure nfsgw serves (cut short, a netobj,
//     caller name or handle one byte past its bound, a huge length claimed) are
//     answered GARBAGE_ARGS, and the service goes on answering;
//   - the same for SHARE and UNSHARE (nlm4_shareargs);
//   - procedures nfsgw does not serve (numbers NLM v4 leaves unused) are
//     PROC_UNAVAIL, other versions PROG_MISMATCH;
//   - forged handles (random bytes, a gateway handle with one byte flipped, the
//     origin's own handle) are answered NLM4_STALE_FH and lock nothing at the origin;
//   - a flood of blocked LOCKs from distinct owners stops at nlm_max_waiters
//     (NLM4_DENIED_NOLOCKS past it), and one of distinct owners at nlm_max_owners;
//     once the holder lets go, nfsgw is as before: nothing left held at the origin.
// The calls are built by hand (tests/support/rpc_wire.h), independent of nfsgw's
// own NLM codec, so a fault there cannot hide itself.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tests/support/lock_files.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/rpc_wire.h"
#include "tests/support/temp_dir.h"

namespace nlm_hostile_test {
namespace {

using namespace integ;

// The shared origin serves NLM on its own port (read by origin-ganesha.sh).
const bool kNlmOn = [] {
  ::setenv("ORIGIN_NLM_PORT", std::to_string(kNlmHostileOriginNlmPort).c_str(), 1);
  return true;
}();
auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

using namespace nlm_wire;
constexpr std::uint32_t kNlmProgram = kProgram, kNlmVersion = kVersion;
constexpr std::uint32_t kGarbageArgs = 4, kProcUnavail = 3, kProgMismatch = 2;
constexpr unsigned kMaxWaiters = 20, kMaxOwners = 40;

class NlmHostile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GatewayConfig cfg;
    cfg.port = kNlmHostileGatewayPort;
    cfg.origin_url = shared_origin().url();
    cfg.server_extra = {{"nlm_port", std::to_string(kNlmHostileGatewayNlmPort)},
                        {"nlm_grace", "\"0\""},
                        {"nlm_max_waiters", std::to_string(kMaxWaiters)},
                        {"nlm_max_owners", std::to_string(kMaxOwners)},
                        {"nlm_caller_name", "\"127.0.0.253\""}};  // its own: nlm_test's comment
    cfg.export_extra = {{"origin_nlm_port", std::to_string(kNlmHostileOriginNlmPort)}};
    gw_ = new NlmGateway("nlm-hostile", cfg, kNlmHostileGatewayNlmPort);
  }
  static void TearDownTestSuite() {
    delete gw_;
    gw_ = nullptr;
  }
  using File = NlmGateway::File;
  static File make(const std::string& name) { return gw_->make(name); }
  /// NULL answers on a fresh connection: the service still serves.
  static bool serving() {
    TcpConn c(kNlmHostileGatewayNlmPort);
    const ParsedReply r = call(c, rpc_call(7, kNlmProgram, kNlmVersion, 0).bytes);
    return r.ok && r.reply_stat == 0 && r.accept_stat == 0;
  }
  static NlmGateway* gw_;
};
NlmGateway* NlmHostile::gw_ = nullptr;

TEST_F(NlmHostile, MalformedArgumentsAreGarbageArgsAndTheServiceGoesOn) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("malformed");
  TcpConn c(kNlmHostileGatewayNlmPort);
  ASSERT_TRUE(c.connected());
  std::uint32_t xid = 100;
  // Positive control: a well-formed TEST of the same file is answered GRANTED.
  WireLock good;
  good.fh = bytes_of(f.via_gw);
  ASSERT_EQ(stat_of(call(c, call_of(++xid, kTest, good).bytes)), kStatGranted) << gw_->log();

  // Each call of `proc` malformed: `whole` (its well-formed call) cut to every
  // strict prefix, `past_bounds` (calls one byte past a bound), and a netobj
  // claiming 4 GiB with a few bytes after it.
  auto expect_garbage = [&](std::uint32_t proc, const std::vector<std::uint8_t>& whole,
                            const std::vector<std::vector<std::uint8_t>>& past_bounds) {
    const std::string p = "procedure " + std::to_string(proc);
    const std::size_t header = rpc_call(0, kNlmProgram, kNlmVersion, proc).bytes.size();
    for (std::size_t n = header; n < whole.size(); n += 4) {
      std::vector<std::uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
      const ParsedReply r = call(c, cut);
      ASSERT_TRUE(r.ok) << p << " cut to " << n << " bytes: no reply";
      EXPECT_EQ(r.accept_stat, kGarbageArgs) << p << " cut to " << n;
    }
    for (const auto& bytes : past_bounds) {
      const ParsedReply r = call(c, bytes);
      ASSERT_TRUE(r.ok) << p;
      EXPECT_EQ(r.accept_stat, kGarbageArgs) << p;
    }
    XdrOut huge = rpc_call(++xid, kNlmProgram, kNlmVersion, proc);
    huge.u32(0xfffffff0).u32(1).u32(2);
    const ParsedReply r = call(c, huge.bytes);
    ASSERT_TRUE(r.ok) << p;
    EXPECT_EQ(r.accept_stat, kGarbageArgs) << p;
  };
  for (std::uint32_t proc : {kTest, kLock, kCancel, kUnlock, kGranted}) {
    WireLock big_name = good, big_fh = good, big_oh = good;
    big_name.caller_name.assign(1025, 'n');
    big_fh.fh.resize(65, 0xab);
    big_oh.oh.assign(1025, 'o');
    expect_garbage(proc, call_of(++xid, proc, good).bytes,
                   {call_of(++xid, proc, big_name).bytes, call_of(++xid, proc, big_fh).bytes,
                    call_of(++xid, proc, big_oh).bytes});
  }
  WireShare share;
  share.fh = bytes_of(f.via_gw);
  for (std::uint32_t proc : {kShare, kUnshare}) {
    WireShare big_name = share, big_fh = share, big_oh = share;
    big_name.caller_name.assign(1025, 'n');
    big_fh.fh.resize(65, 0xab);
    big_oh.oh.assign(1025, 'o');
    expect_garbage(proc, share_call_of(++xid, proc, share).bytes,
                   {share_call_of(++xid, proc, big_name).bytes, share_call_of(++xid, proc, big_fh).bytes,
                    share_call_of(++xid, proc, big_oh).bytes});
  }
  // Positive control: the well-formed SHARE and UNSHARE are served.
  EXPECT_EQ(stat_of(call(c, share_call_of(++xid, kShare, share).bytes)), kStatGranted) << gw_->log();
  EXPECT_EQ(stat_of(call(c, share_call_of(++xid, kUnshare, share).bytes)), kStatGranted) << gw_->log();
  // FREE_ALL with a name past MAXNAMELEN (1025).
  XdrOut free_all = rpc_call(++xid, kNlmProgram, kNlmVersion, kFreeAll);
  free_all.string(std::string(1026, 'h')).u32(3);
  const ParsedReply fa = call(c, free_all.bytes);
  ASSERT_TRUE(fa.ok);
  EXPECT_EQ(fa.accept_stat, kGarbageArgs);
  // Served with arguments: a _MSG and a _RES called without any.
  for (std::uint32_t proc : {6u, 11u}) {
    const ParsedReply r = call(c, rpc_call(++xid, kNlmProgram, kNlmVersion, proc).bytes);
    ASSERT_TRUE(r.ok) << proc;
    EXPECT_EQ(r.accept_stat, kGarbageArgs) << proc;
  }
  // Not served: numbers NLM v4 leaves unused, an unknown procedure; another version.
  for (std::uint32_t proc : {16u, 19u, 99u}) {
    const ParsedReply r = call(c, rpc_call(++xid, kNlmProgram, kNlmVersion, proc).bytes);
    ASSERT_TRUE(r.ok) << proc;
    EXPECT_EQ(r.accept_stat, kProcUnavail) << proc;
  }
  const ParsedReply v1 = call(c, rpc_call(++xid, kNlmProgram, 1, 0).bytes);
  ASSERT_TRUE(v1.ok);
  EXPECT_EQ(v1.accept_stat, kProgMismatch);
  EXPECT_EQ(v1.low, 4u);
  EXPECT_EQ(v1.high, 4u);
  // The same connection and a new one are still served, and the file is free.
  EXPECT_EQ(stat_of(call(c, call_of(++xid, kTest, good).bytes)), kStatGranted);
  EXPECT_TRUE(serving());
  EXPECT_FALSE(locked_at_origin(f.path));
}

TEST_F(NlmHostile, ForgedHandlesAreStaleAndLockNothingAtTheOrigin) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("forged");
  TcpConn c(kNlmHostileGatewayNlmPort);
  ASSERT_TRUE(c.connected());
  std::uint32_t xid = 500;
  std::mt19937 rng(21);
  std::vector<std::vector<std::uint8_t>> forged;
  for (int i = 0; i < 20; ++i) {
    std::vector<std::uint8_t> h(1 + rng() % 64);
    for (auto& b : h) b = static_cast<std::uint8_t>(rng());
    forged.push_back(h);
  }
  for (std::size_t i = 0; i < f.via_gw.size(); i += 3) {  // one byte flipped anywhere
    std::vector<std::uint8_t> h = bytes_of(f.via_gw);
    h[i] ^= 0x40;
    forged.push_back(h);
  }
  forged.push_back(bytes_of(f.at_origin));  // the origin's own handle
  forged.push_back({});                      // empty
  for (const auto& h : forged) {
    for (std::uint32_t proc : {kLock, kTest, kUnlock, kCancel}) {
      WireLock l;
      l.fh = h;
      l.svid = 77;
      EXPECT_EQ(stat_of(call(c, call_of(++xid, proc, l, /*block=*/true).bytes)), kStatStaleFh)
          << "procedure " << proc << ", handle of " << h.size() << " bytes";
    }
  }
  EXPECT_FALSE(locked_at_origin(f.path)) << "a forged handle locked the origin's file";
  // Positive control: the real handle locks it there, and unlocks it.
  WireLock real;
  real.fh = bytes_of(f.via_gw);
  real.length = 0;
  ASSERT_EQ(stat_of(call(c, call_of(++xid, kLock, real).bytes)), kStatGranted) << gw_->log();
  EXPECT_TRUE(locked_at_origin(f.path));
  EXPECT_EQ(stat_of(call(c, call_of(++xid, kUnlock, real).bytes)), kStatGranted);
  EXPECT_FALSE(locked_at_origin(f.path));
}

TEST_F(NlmHostile, FloodsOfWaitersAndOwnersStopAtTheirBoundsAndLeaveNothingBehind) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("flood");
  TcpConn c(kNlmHostileGatewayNlmPort);
  ASSERT_TRUE(c.connected());
  std::uint32_t xid = 1000;
  WireLock holder;
  holder.fh = bytes_of(f.via_gw);
  holder.oh = {'h'};
  holder.svid = 1;
  holder.length = 0;
  ASSERT_EQ(stat_of(call(c, call_of(++xid, kLock, holder).bytes)), kStatGranted) << gw_->log();
  // Blocking LOCKs of distinct owners: BLOCKED up to nlm_max_waiters, then NOLOCKS.
  unsigned blocked = 0, nolocks = 0, other = 0;
  std::vector<WireLock> waiters;
  for (unsigned i = 0; i < kMaxWaiters + 15; ++i) {
    WireLock w = holder;
    w.oh = {'w', static_cast<std::uint8_t>(i)};
    w.svid = 100 + i;
    const std::uint32_t s = stat_of(call(c, call_of(++xid, kLock, w, /*block=*/true).bytes));
    if (s == kStatBlocked) {
      ++blocked;
      waiters.push_back(w);
    } else if (s == kStatDeniedNolocks) {
      ++nolocks;
    } else {
      ++other;
    }
  }
  EXPECT_EQ(blocked, kMaxWaiters);
  EXPECT_EQ(nolocks, 15u);
  EXPECT_EQ(other, 0u);
  // Non-blocking LOCKs of ever new owners: DENIED while there is room for owners
  // (each is refused, not kept), never an owner table that grows without bound.
  unsigned denied = 0;
  for (unsigned i = 0; i < 3 * kMaxOwners; ++i) {
    WireLock o = holder;
    o.oh = {'x', static_cast<std::uint8_t>(i & 0xff), static_cast<std::uint8_t>(i >> 8)};
    o.svid = 1000 + i;
    const std::uint32_t s = stat_of(call(c, call_of(++xid, kLock, o).bytes));
    EXPECT_TRUE(s == kStatDenied || s == kStatDeniedNolocks) << "owner " << i << ": " << s;
    denied += s == kStatDenied ? 1 : 0;
  }
  EXPECT_GT(denied, 0u);
  EXPECT_TRUE(serving());
  // The waiters cancelled, the holder gone: nothing is held at the origin, and a
  // new owner takes the whole file at once.
  for (const WireLock& w : waiters)
    EXPECT_EQ(stat_of(call(c, call_of(++xid, kCancel, w, /*block=*/true).bytes)), kStatGranted);
  ASSERT_EQ(stat_of(call(c, call_of(++xid, kUnlock, holder).bytes)), kStatGranted);
  EXPECT_FALSE(locked_at_origin(f.path));
  WireLock fresh = holder;
  fresh.oh = {'f'};
  fresh.svid = 9;
  EXPECT_EQ(stat_of(call(c, call_of(++xid, kLock, fresh).bytes)), kStatGranted);
  EXPECT_EQ(stat_of(call(c, call_of(++xid, kUnlock, fresh).bytes)), kStatGranted);
  EXPECT_FALSE(locked_at_origin(f.path));
}

}  // namespace
}  // namespace nlm_hostile_test
