// NLM v4 and NSM v1 codecs: every type round-trips, every strict prefix of an
// encoding is refused, the layouts agree byte for byte with libnfs's NLM/NSM
// client (an independent encoder) and with a hand-written LOCK call, and every
// bound the protocol sets is accepted at its limit and refused one byte past it.
#include <gtest/gtest.h>

#include <set>

#include "protocol/nlm4_types.h"
#include "protocol/nlm_nsm_types.h"
#include "tests/unit/protocol/nlm_codec_cases.h"
#include "tests/unit/protocol/nlm_libnfs_reference.h"

namespace nfsgw::test::nlm4_codec_test {
namespace {

using namespace nfsgw::test::nlm_cases;
namespace ref = nfsgw::test::nlm_libnfs_ref;

class NlmCodecRoundTrip : public ::testing::TestWithParam<std::size_t> {};

TEST_P(NlmCodecRoundTrip, DecodesToOriginalAndConsumesAll) {
  const NlmCase& c = all_nlm_cases()[GetParam()];
  ASSERT_FALSE(c.encoded.empty());
  EXPECT_EQ(c.encoded.size() % 4, 0u) << "XDR output is 4-byte aligned";
  EXPECT_TRUE(c.decodes_to_original(c.encoded));
  EXPECT_EQ(c.decode(c.encoded), c.encoded.size());
  EXPECT_EQ(c.reencode(c.encoded), c.encoded);
}

TEST_P(NlmCodecRoundTrip, TrailingBytesAreLeftUnread) {
  const NlmCase& c = all_nlm_cases()[GetParam()];
  Bytes b = c.encoded;
  b.insert(b.end(), {1, 2, 3, 4});
  EXPECT_EQ(c.decode(b), c.encoded.size());
}

TEST_P(NlmCodecRoundTrip, EveryStrictPrefixIsRefused) {
  const NlmCase& c = all_nlm_cases()[GetParam()];
  for (std::size_t n = 0; n < c.encoded.size(); ++n) {
    // A copy of exactly n bytes, so the sanitizer build sees any overrun.
    Bytes prefix(c.encoded.begin(), c.encoded.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(c.decode(prefix), xdr::DecodeError) << c.name << " prefix " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, NlmCodecRoundTrip, ::testing::Range<std::size_t>(0, all_nlm_cases().size()),
                         [](const auto& info) { return all_nlm_cases()[info.param].name; });

TEST(NlmCodecCases, NamesAreUniqueAndEveryTypeIsThere) {
  std::set<std::string> names;
  for (const NlmCase& c : all_nlm_cases()) EXPECT_TRUE(names.insert(c.name).second) << c.name;
  // One case at least of every codec type of both programs.
  for (const char* type : {"Nlm4TestArgs", "Nlm4LockArgs", "Nlm4CancelArgs", "Nlm4UnlockArgs", "Nlm4ShareArgs",
                           "Nlm4Notify", "Nlm4Res_", "Nlm4TestResGranted", "Nlm4TestResDenied", "Nlm4ShareRes",
                           "NsmSmName", "NsmMyId", "NsmMonId", "NsmMon", "NsmStatResSucc", "NsmStatResFail",
                           "NsmSmStat", "NsmStatChange", "NsmStatus"}) {
    bool found = false;
    for (const std::string& n : names) found = found || n.starts_with(type);
    EXPECT_TRUE(found) << type;
  }
}

// --- the layout, byte for byte ----------------------------------------------

void put32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}
void put64(Bytes& b, std::uint64_t v) {
  put32(b, static_cast<std::uint32_t>(v >> 32));
  put32(b, static_cast<std::uint32_t>(v));
}
void put_opaque(Bytes& b, const Bytes& data) {
  put32(b, static_cast<std::uint32_t>(data.size()));
  b.insert(b.end(), data.begin(), data.end());
  while (b.size() % 4) b.push_back(0);
}

TEST(Nlm4Layout, LockArgsByHand) {
  const nlm4::LockArgs a = sample_lock_args();
  Bytes want;
  put_opaque(want, a.cookie);
  put32(want, 1);  // block
  put32(want, 1);  // exclusive
  put_opaque(want, Bytes(a.lock.caller_name.begin(), a.lock.caller_name.end()));
  put_opaque(want, Bytes(a.lock.fh.view().begin(), a.lock.fh.view().end()));
  put_opaque(want, a.lock.oh);
  put32(want, 4242);
  put64(want, 0x0000000100000010ull);
  put64(want, 0x20);
  put32(want, 0);   // reclaim
  put32(want, 17);  // state
  EXPECT_EQ(encoded(a), want);
  EXPECT_EQ(decoded<nlm4::LockArgs>(want), a);
}

TEST(Nlm4Layout, TestResCarriesTheHolderOnlyWhenDenied) {
  nlm4::TestRes r;
  r.cookie = {1, 2, 3, 4};
  r.stat = nlm4::Stat::Denied;
  r.holder.oh = {5, 6, 7, 8};
  const std::size_t denied = encoded(r).size();
  EXPECT_EQ(denied, 8u + 4 + (4 + 4 + 8 + 8 + 8));
  // Every other status is the cookie and the status alone, whatever the holder says.
  for (std::uint32_t s = 0; s <= 9; ++s) {
    if (s == 1) continue;
    r.stat = static_cast<nlm4::Stat>(s);
    EXPECT_EQ(encoded(r).size(), 12u) << s;
    nlm4::TestRes back = decoded<nlm4::TestRes>(encoded(r));
    EXPECT_EQ(back.holder, nlm4::Holder{}) << s;
  }
}

TEST(Nlm4Layout, AgreesWithLibnfs) {
  for (const NlmCase& c : all_nlm_cases()) {
    SCOPED_TRACE(c.name);
    Bytes want;
    if (c.name.starts_with("Nlm4TestArgs")) {
      const auto v = decoded<nlm4::TestArgs>(c.encoded);
      want = ref::encode(v);
      EXPECT_EQ(ref::encode_granted(v), c.encoded) << "GRANTED takes TEST's arguments";
    } else if (c.name.starts_with("Nlm4LockArgs")) {
      want = ref::encode(decoded<nlm4::LockArgs>(c.encoded));
    } else if (c.name.starts_with("Nlm4CancelArgs")) {
      want = ref::encode(decoded<nlm4::CancelArgs>(c.encoded));
    } else if (c.name.starts_with("Nlm4UnlockArgs")) {
      want = ref::encode(decoded<nlm4::UnlockArgs>(c.encoded));
    } else if (c.name.starts_with("Nlm4Res_")) {
      want = ref::encode(decoded<nlm4::Res>(c.encoded));
    } else if (c.name.starts_with("Nlm4TestRes")) {
      want = ref::encode(decoded<nlm4::TestRes>(c.encoded));
    } else if (c.name == "NsmSmName") {
      want = ref::encode(decoded<nsm::SmName>(c.encoded));
    } else if (c.name == "NsmMyId") {
      want = ref::encode(decoded<nsm::MyId>(c.encoded));
    } else if (c.name == "NsmMonId") {
      want = ref::encode(decoded<nsm::MonId>(c.encoded));
    } else if (c.name == "NsmMon") {
      want = ref::encode(decoded<nsm::Mon>(c.encoded));
    } else if (c.name.starts_with("NsmStatRes")) {
      want = ref::encode(decoded<nsm::StatRes>(c.encoded));
    } else if (c.name == "NsmSmStat") {
      want = ref::encode(decoded<nsm::SmStat>(c.encoded));
    } else if (c.name == "NsmStatChange") {
      want = ref::encode(decoded<nsm::StatChange>(c.encoded));
    } else {
      continue;  // SHARE, FREE_ALL and the statd callback: libnfs has no encoder for them
    }
    ASSERT_FALSE(want.empty()) << "libnfs refused to encode";
    EXPECT_EQ(c.encoded, want);
  }
}

TEST(Nlm4Layout, ProcedureNumbersAndNames) {
  EXPECT_EQ(nlm4::kProgram, 100021u);
  EXPECT_EQ(nlm4::kVersion, 4u);
  EXPECT_EQ(nsm::kProgram, 100024u);
  EXPECT_EQ(nsm::kVersion, 1u);
  EXPECT_STREQ(nlm4::name(nlm4::Proc::Test), "TEST");
  EXPECT_STREQ(nlm4::name(nlm4::Proc::GrantedRes), "GRANTED_RES");
  EXPECT_STREQ(nlm4::name(nlm4::Proc::FreeAll), "FREE_ALL");
  EXPECT_EQ(static_cast<std::uint32_t>(nlm4::Proc::GrantedRes), 15u);
  EXPECT_EQ(static_cast<std::uint32_t>(nlm4::Proc::Share), 20u);
  EXPECT_EQ(static_cast<std::uint32_t>(nlm4::Proc::FreeAll), 23u);
  int named = 0;
  for (std::uint32_t p = 0; p < 64; ++p) named += nlm4::name(static_cast<nlm4::Proc>(p)) != nullptr;
  EXPECT_EQ(named, 20) << "0..15 and 20..23";
  for (std::uint32_t p : {16u, 17u, 18u, 19u, 24u}) EXPECT_EQ(nlm4::name(static_cast<nlm4::Proc>(p)), nullptr) << p;
  EXPECT_STREQ(nlm4::name(nlm4::Stat::DeniedNoLocks), "NLM4_DENIED_NOLOCKS");
  EXPECT_STREQ(nlm4::name(static_cast<nlm4::Stat>(10)), "NLM4_?");
  EXPECT_EQ(static_cast<std::uint32_t>(nsm::Proc::Notify), 6u);
}

// --- bounds --------------------------------------------------------------------

/// Encodes `v` after `set(v, n)`, and checks that n == limit decodes and
/// n == limit + 1 is refused.
template <typename T, typename Set>
void check_bound(T v, std::size_t limit, Set set, const char* what) {
  SCOPED_TRACE(what);
  set(v, limit);
  const Bytes at = encoded(v);
  EXPECT_EQ(decoded<T>(at), v);
  set(v, limit + 1);
  const Bytes past = encoded(v);
  EXPECT_THROW(decoded<T>(past), xdr::DecodeError);
}

std::string str(std::size_t n) { return std::string(n, 'h'); }
Bytes obj(std::size_t n) { return Bytes(n, 0x5A); }

TEST(Nlm4Bounds, NetobjsCallerNamesAndHandles) {
  const auto lock_args = sample_lock_args();
  check_bound(lock_args, 1024, [](nlm4::LockArgs& a, std::size_t n) { a.cookie = obj(n); }, "cookie");
  check_bound(lock_args, 1024, [](nlm4::LockArgs& a, std::size_t n) { a.lock.oh = obj(n); }, "owner handle");
  check_bound(lock_args, 1024, [](nlm4::LockArgs& a, std::size_t n) { a.lock.caller_name = str(n); },
              "caller_name");

  nlm4::UnlockArgs unlock;
  unlock.lock = sample_lock();
  check_bound(unlock, 1024, [](nlm4::UnlockArgs& a, std::size_t n) { a.cookie = obj(n); }, "unlock cookie");
  nlm4::CancelArgs cancel;
  cancel.lock = sample_lock();
  check_bound(cancel, 1024, [](nlm4::CancelArgs& a, std::size_t n) { a.lock.oh = obj(n); }, "cancel oh");
  nlm4::TestArgs test;
  test.lock = sample_lock();
  check_bound(test, 1024, [](nlm4::TestArgs& a, std::size_t n) { a.lock.caller_name = str(n); }, "test name");

  const auto share = sample_share_args();
  check_bound(share, 1024, [](nlm4::ShareArgs& a, std::size_t n) { a.share.caller_name = str(n); }, "share name");
  check_bound(share, 1024, [](nlm4::ShareArgs& a, std::size_t n) { a.share.oh = obj(n); }, "share oh");
  check_bound(share, 1024, [](nlm4::ShareArgs& a, std::size_t n) { a.cookie = obj(n); }, "share cookie");

  check_bound(nlm4::Notify{}, 1025, [](nlm4::Notify& a, std::size_t n) { a.name = str(n); }, "notify name");
  check_bound(nlm4::Res{}, 1024, [](nlm4::Res& a, std::size_t n) { a.cookie = obj(n); }, "res cookie");
  nlm4::TestRes denied;
  denied.stat = nlm4::Stat::Denied;
  check_bound(denied, 1024, [](nlm4::TestRes& a, std::size_t n) { a.holder.oh = obj(n); }, "holder oh");
  check_bound(nlm4::ShareRes{}, 1024, [](nlm4::ShareRes& a, std::size_t n) { a.cookie = obj(n); }, "share res");
}

// The handle bound is nfs3::FileHandle's: FileHandle itself holds at most 64
// bytes, so 65 is written by hand.
TEST(Nlm4Bounds, FileHandleIsAnNfs3HandleOfAtMost64Bytes) {
  nlm4::UnlockArgs a;
  a.lock = sample_lock();
  a.lock.fh = nfs3::FileHandle(Bytes(64, 0xEE));
  EXPECT_EQ(decoded<nlm4::UnlockArgs>(encoded(a)), a);

  Bytes b;
  put_opaque(b, {9});                    // cookie
  put_opaque(b, {'c'});                  // caller_name
  put_opaque(b, Bytes(65, 0xEE));        // fh: one byte too many
  put_opaque(b, {1});                    // oh
  put32(b, 1);
  put64(b, 0);
  put64(b, 0);
  EXPECT_THROW(decoded<nlm4::UnlockArgs>(b), xdr::DecodeError);
  nlm4::UnlockArgs ok;
  ok.cookie = {9};
  ok.lock.caller_name = "c";
  ok.lock.fh = nfs3::FileHandle(Bytes(64, 0xEE));
  ok.lock.oh = {1};
  ok.lock.svid = 1;
  Bytes good;
  put_opaque(good, {9});
  put_opaque(good, {'c'});
  put_opaque(good, Bytes(64, 0xEE));
  put_opaque(good, {1});
  put32(good, 1);
  put64(good, 0);
  put64(good, 0);
  EXPECT_EQ(decoded<nlm4::UnlockArgs>(good), ok) << "the positive control of the same hand encoding";

  nlm4::ShareArgs s = sample_share_args();
  Bytes sb = encoded(s);
  // The share's fh starts after the cookie (4 + 4) and the caller name (4 + 8).
  ASSERT_EQ(sb[8 + 12 + 3], 64);
  sb[8 + 12 + 3] = 65;
  sb.insert(sb.begin() + 8 + 12 + 4 + 64, {0xEE, 0, 0, 0});
  EXPECT_THROW(decoded<nlm4::ShareArgs>(sb), xdr::DecodeError);
}

TEST(Nlm4Bounds, HugeLengthPrefixIsRefusedBeforeAnyAllocation) {
  Bytes b;
  put32(b, 0xFFFFFFFFu);  // cookie length
  EXPECT_THROW(decoded<nlm4::LockArgs>(b), xdr::DecodeError);
  EXPECT_THROW(decoded<nlm4::Res>(b), xdr::DecodeError);
  EXPECT_THROW(decoded<nlm4::Notify>(b), xdr::DecodeError);
  EXPECT_THROW(decoded<nsm::Mon>(b), xdr::DecodeError);
}

TEST(Nlm4Bounds, EnumsAndBoolsOutsideTheirValuesAreRefused) {
  // nlm4_stats: 0..9.
  nlm4::Res res;
  res.cookie = {1};
  res.stat = nlm4::Stat::Failed;
  EXPECT_EQ(decoded<nlm4::Res>(encoded(res)), res);
  res.stat = static_cast<nlm4::Stat>(10);
  EXPECT_THROW(decoded<nlm4::Res>(encoded(res)), xdr::DecodeError);
  nlm4::TestRes tres;
  tres.stat = static_cast<nlm4::Stat>(0xFFFFFFFFu);
  EXPECT_THROW(decoded<nlm4::TestRes>(encoded(tres)), xdr::DecodeError);
  nlm4::ShareRes sres;
  sres.stat = static_cast<nlm4::Stat>(10);
  EXPECT_THROW(decoded<nlm4::ShareRes>(encoded(sres)), xdr::DecodeError);
  EXPECT_FALSE(nlm4::is_valid(static_cast<nlm4::Stat>(10)));
  EXPECT_TRUE(nlm4::is_valid(nlm4::Stat::Failed));

  // fsh4_mode and fsh4_access: 0..3.
  nlm4::ShareArgs s = sample_share_args();
  s.share.mode = static_cast<nlm4::ShareMode>(4);
  EXPECT_THROW(decoded<nlm4::ShareArgs>(encoded(s)), xdr::DecodeError);
  s = sample_share_args();
  s.share.access = static_cast<nlm4::ShareAccess>(4);
  EXPECT_THROW(decoded<nlm4::ShareArgs>(encoded(s)), xdr::DecodeError);
  s.share.access = nlm4::ShareAccess::None;
  s.share.mode = nlm4::ShareMode::DenyReadWrite;
  EXPECT_EQ(decoded<nlm4::ShareArgs>(encoded(s)), s);

  // Each bool of LOCK's arguments (block, exclusive, reclaim) set to 2.
  const Bytes good = encoded(sample_lock_args());
  const std::size_t cookie = 4 + 8;
  const std::size_t reclaim_at = good.size() - 8;
  for (std::size_t at : {cookie, cookie + 4, reclaim_at}) {
    Bytes bad = good;
    ASSERT_LE(bad[at + 3], 1) << at;
    bad[at + 3] = 2;
    EXPECT_THROW(decoded<nlm4::LockArgs>(bad), xdr::DecodeError) << at;
  }
  // The holder's exclusive flag.
  nlm4::TestRes denied;
  denied.stat = nlm4::Stat::Denied;
  Bytes d = encoded(denied);
  d[8 + 3] = 7;  // after the empty cookie and the status
  EXPECT_THROW(decoded<nlm4::TestRes>(d), xdr::DecodeError);
}

TEST(NsmBounds, NamesAndResult) {
  const nsm::Mon mon = sample_mon();
  check_bound(mon, 1024, [](nsm::Mon& m, std::size_t n) { m.mon_id.mon_name = str(n); }, "mon_name");
  check_bound(mon, 1024, [](nsm::Mon& m, std::size_t n) { m.mon_id.my_id.my_name = str(n); }, "my_name");
  check_bound(mon.mon_id, 1024, [](nsm::MonId& m, std::size_t n) { m.mon_name = str(n); }, "unmon");
  check_bound(mon.mon_id.my_id, 1024, [](nsm::MyId& m, std::size_t n) { m.my_name = str(n); }, "unmon_all");
  check_bound(nsm::SmName{}, 1024, [](nsm::SmName& m, std::size_t n) { m.mon_name = str(n); }, "stat");
  check_bound(nsm::StatChange{}, 1024, [](nsm::StatChange& m, std::size_t n) { m.mon_name = str(n); }, "notify");
  check_bound(nsm::Status{}, 1024, [](nsm::Status& m, std::size_t n) { m.mon_name = str(n); }, "callback");

  nsm::StatRes r{nsm::Result::Failure, 1};
  EXPECT_EQ(decoded<nsm::StatRes>(encoded(r)), r);
  r.res = static_cast<nsm::Result>(2);
  EXPECT_THROW(decoded<nsm::StatRes>(encoded(r)), xdr::DecodeError);
}

TEST(NsmLayout, PrivIsSixteenFixedBytesWithNoLength) {
  nsm::Status s;
  s.mon_name = "abcd";
  s.state = 3;
  s.priv = sample_mon().priv;
  Bytes want;
  put_opaque(want, {'a', 'b', 'c', 'd'});
  put32(want, 3);
  want.insert(want.end(), s.priv.begin(), s.priv.end());
  EXPECT_EQ(encoded(s), want);
  EXPECT_EQ(decoded<nsm::Status>(want), s);
  // A Mon is its mon_id and the same 16 bytes.
  EXPECT_EQ(encoded(sample_mon()).size(), encoded(sample_mon().mon_id).size() + 16);
}

}  // namespace
}  // namespace nfsgw::test::nlm4_codec_test
