// RPC call/reply headers and AUTH_SYS, checked byte for byte against libtirpc's
// xdr_callmsg, xdr_replymsg and xdr_authunix_parms, plus the refusal cases.
#include "protocol/rpc_message.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/protocol/tirpc_reference.h"

namespace nfsgw::rpc {
namespace {

namespace ref = nfsgw::test::tirpc_ref;
using Bytes = std::vector<std::uint8_t>;

AuthSys sample_auth_sys() {
  AuthSys a;
  a.stamp = 0x5EED1234;
  a.machinename = "client.example";
  a.uid = 1001;
  a.gid = 100;
  a.gids = {100, 4, 24, 27, 30};
  return a;
}

ref::AuthSys to_ref(const AuthSys& a) { return {a.stamp, a.machinename, a.uid, a.gid, a.gids}; }

CallHeader sample_call() {
  CallHeader h;
  h.xid = 0x01020304;
  h.prog = 100003;
  h.vers = 3;
  h.proc = 6;
  h.cred.flavor = static_cast<std::uint32_t>(AuthFlavor::Sys);
  h.cred.body = encode_auth_sys(sample_auth_sys());
  h.verf.flavor = static_cast<std::uint32_t>(AuthFlavor::None);
  return h;
}

ref::Call to_ref(const CallHeader& h) {
  ref::Call c;
  c.xid = h.xid;
  c.rpcvers = h.rpcvers;
  c.prog = h.prog;
  c.vers = h.vers;
  c.proc = h.proc;
  c.cred = {h.cred.flavor, h.cred.body};
  c.verf = {h.verf.flavor, h.verf.body};
  return c;
}

Bytes encode(const CallHeader& h) {
  Bytes out;
  xdr::Writer w(out);
  encode_call_header(w, h);
  return out;
}

TEST(RpcAuthSys, EncodingMatchesTirpc) {
  EXPECT_EQ(encode_auth_sys(sample_auth_sys()), ref::encode_auth_sys(to_ref(sample_auth_sys())));
  AuthSys empty;
  EXPECT_EQ(encode_auth_sys(empty), ref::encode_auth_sys(to_ref(empty)));
}

TEST(RpcAuthSys, DecodesTirpcEncoding) {
  AuthSys want = sample_auth_sys();
  want.gids.assign({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  AuthSys got = decode_auth_sys(ref::encode_auth_sys(to_ref(want)));
  EXPECT_EQ(got.stamp, want.stamp);
  EXPECT_EQ(got.machinename, want.machinename);
  EXPECT_EQ(got.uid, want.uid);
  EXPECT_EQ(got.gid, want.gid);
  EXPECT_EQ(got.gids, want.gids);
}

TEST(RpcAuthSys, TirpcDecodesOurEncoding) {
  auto got = ref::decode_auth_sys(encode_auth_sys(sample_auth_sys()));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->machinename, "client.example");
  EXPECT_EQ(got->uid, 1001u);
  EXPECT_EQ(got->gids, sample_auth_sys().gids);
}

TEST(RpcAuthSys, SeventeenGidsRejected) {
  AuthSys a = sample_auth_sys();
  a.gids.assign(17, 5);
  EXPECT_THROW(decode_auth_sys(encode_auth_sys(a)), xdr::DecodeError);
}

TEST(RpcAuthSys, LongMachineNameRejected) {
  AuthSys a = sample_auth_sys();
  a.machinename.assign(256, 'm');
  EXPECT_THROW(decode_auth_sys(encode_auth_sys(a)), xdr::DecodeError);
  a.machinename.assign(255, 'm');
  EXPECT_EQ(decode_auth_sys(encode_auth_sys(a)).machinename.size(), 255u);
}

TEST(RpcAuthSys, EveryTruncationRejected) {
  Bytes b = encode_auth_sys(sample_auth_sys());
  for (std::size_t n = 0; n < b.size(); ++n) {
    EXPECT_THROW(decode_auth_sys(std::span(b).first(n)), xdr::DecodeError) << n;
  }
}

TEST(RpcAuthSys, TrailingBytesTolerated) {
  Bytes b = encode_auth_sys(sample_auth_sys());
  b.insert(b.end(), {0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF});
  EXPECT_EQ(decode_auth_sys(b).uid, 1001u);
}

TEST(RpcCall, EncodingMatchesTirpc) {
  CallHeader h = sample_call();
  EXPECT_EQ(encode(h), ref::encode_call(to_ref(h)));
  h.cred = {};
  h.verf.body = {1, 2, 3, 4, 5};  // unpadded verifier body
  EXPECT_EQ(encode(h), ref::encode_call(to_ref(h)));
}

TEST(RpcCall, DecodesTirpcEncodingAndStopsAtArguments) {
  CallHeader want = sample_call();
  Bytes b = ref::encode_call(to_ref(want));
  b.insert(b.end(), {0xAB, 0xCD, 0xEF, 0x01});  // procedure arguments
  xdr::Reader r(b);
  CallHeader got = decode_call_header(r);
  EXPECT_EQ(got.xid, want.xid);
  EXPECT_EQ(got.rpcvers, 2u);
  EXPECT_EQ(got.prog, want.prog);
  EXPECT_EQ(got.vers, want.vers);
  EXPECT_EQ(got.proc, want.proc);
  EXPECT_EQ(got.cred.flavor, want.cred.flavor);
  EXPECT_EQ(got.cred.body, want.cred.body);
  EXPECT_EQ(got.verf.flavor, 0u);
  EXPECT_TRUE(got.verf.body.empty());
  ASSERT_EQ(r.remaining(), 4u);
  EXPECT_EQ(r.rest()[0], 0xAB);
}

TEST(RpcCall, TirpcDecodesOurEncoding) {
  CallHeader h = sample_call();
  auto got = ref::decode_call(encode(h));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->xid, h.xid);
  EXPECT_EQ(got->prog, h.prog);
  EXPECT_EQ(got->proc, h.proc);
  EXPECT_EQ(got->cred.body, h.cred.body);
}

TEST(RpcCall, ReplyMessageRejected) {
  Bytes b;
  xdr::Writer w(b);
  encode_accepted_reply(w, 7, AcceptStat::Success);
  xdr::Reader r(b);
  EXPECT_THROW(decode_call_header(r), xdr::DecodeError);
}

TEST(RpcCall, UnknownMessageTypeRejected) {
  Bytes b = encode(sample_call());
  b[7] = 2;  // msg_type
  xdr::Reader r(b);
  EXPECT_THROW(decode_call_header(r), xdr::DecodeError);
}

TEST(RpcCall, AuthBodyOver400BytesRejected) {
  CallHeader h = sample_call();
  h.cred.body.assign(401, 0);
  Bytes b = encode(h);
  xdr::Reader r(b);
  EXPECT_THROW(decode_call_header(r), xdr::DecodeError);
  h.cred.body.assign(400, 0);
  Bytes ok = encode(h);
  xdr::Reader r2(ok);
  EXPECT_EQ(decode_call_header(r2).cred.body.size(), 400u);
}

TEST(RpcCall, WrongRpcVersionIsDecodedForTheDispatcher) {
  CallHeader h = sample_call();
  h.rpcvers = 3;
  Bytes b = encode(h);
  xdr::Reader r(b);
  EXPECT_EQ(decode_call_header(r).rpcvers, 3u);
}

TEST(RpcCall, EveryTruncationRejected) {
  Bytes b = encode(sample_call());
  for (std::size_t n = 0; n < b.size(); ++n) {
    xdr::Reader r{std::span<const std::uint8_t>(b).first(n)};
    EXPECT_THROW(decode_call_header(r), xdr::DecodeError) << n;
  }
}

// ---- replies ---------------------------------------------------------------

template <class Fn>
Bytes reply(Fn fn) {
  Bytes out;
  xdr::Writer w(out);
  fn(w);
  return out;
}

ref::Reply accepted(std::uint32_t xid, std::uint32_t stat, std::uint32_t low = 0, std::uint32_t high = 0) {
  ref::Reply r;
  r.xid = xid;
  r.accept_stat = stat;
  r.low = low;
  r.high = high;
  return r;
}

TEST(RpcReply, AcceptedRepliesMatchTirpc) {
  for (AcceptStat s : {AcceptStat::Success, AcceptStat::ProgUnavail, AcceptStat::ProcUnavail,
                       AcceptStat::GarbageArgs, AcceptStat::SystemErr}) {
    EXPECT_EQ(reply([&](xdr::Writer& w) { encode_accepted_reply(w, 0xA1B2C3D4, s); }),
              ref::encode_reply(accepted(0xA1B2C3D4, static_cast<std::uint32_t>(s))))
        << static_cast<int>(s);
  }
}

TEST(RpcReply, ProgMismatchMatchesTirpc) {
  EXPECT_EQ(reply([](xdr::Writer& w) { encode_prog_mismatch(w, 99, 3, 3); }),
            ref::encode_reply(accepted(99, 2, 3, 3)));
  EXPECT_EQ(reply([](xdr::Writer& w) { encode_prog_mismatch(w, 5, 1, 3); }),
            ref::encode_reply(accepted(5, 2, 1, 3)));
}

TEST(RpcReply, RpcMismatchMatchesTirpc) {
  ref::Reply want;
  want.xid = 42;
  want.accepted = false;
  want.reject_stat = 0;
  want.low = 2;
  want.high = 2;
  EXPECT_EQ(reply([](xdr::Writer& w) { encode_rpc_mismatch(w, 42); }), ref::encode_reply(want));
}

TEST(RpcReply, AuthErrorMatchesTirpc) {
  for (AuthStat why : {AuthStat::BadCred, AuthStat::TooWeak, AuthStat::RejectedCred}) {
    ref::Reply want;
    want.xid = 43;
    want.accepted = false;
    want.reject_stat = 1;
    want.auth_stat = static_cast<std::uint32_t>(why);
    EXPECT_EQ(reply([&](xdr::Writer& w) { encode_auth_error(w, 43, why); }), ref::encode_reply(want));
  }
}

TEST(RpcReply, TirpcDecodesOurSuccessWithNoneVerifier) {
  auto got = ref::decode_reply(reply([](xdr::Writer& w) { encode_accepted_reply(w, 77, AcceptStat::Success); }));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->xid, 77u);
  EXPECT_TRUE(got->accepted);
  EXPECT_EQ(got->accept_stat, 0u);
  EXPECT_EQ(got->verf_flavor, 0u);
  EXPECT_EQ(got->verf_len, 0u);
}

TEST(RpcReply, DecodesTirpcReplies) {
  {
    Bytes b = ref::encode_reply(accepted(10, 2, 2, 4));
    xdr::Reader r(b);
    ReplyHeader h = decode_reply_header(r);
    EXPECT_EQ(h.xid, 10u);
    EXPECT_EQ(h.stat, ReplyStat::Accepted);
    EXPECT_EQ(h.accept, AcceptStat::ProgMismatch);
    EXPECT_EQ(h.mismatch_low, 2u);
    EXPECT_EQ(h.mismatch_high, 4u);
    EXPECT_EQ(r.remaining(), 0u);
  }
  {
    Bytes b = ref::encode_reply(accepted(11, 4));
    xdr::Reader r(b);
    ReplyHeader h = decode_reply_header(r);
    EXPECT_EQ(h.accept, AcceptStat::GarbageArgs);
  }
  {
    ref::Reply d;
    d.xid = 12;
    d.accepted = false;
    d.reject_stat = 1;
    d.auth_stat = 5;
    Bytes b = ref::encode_reply(d);
    xdr::Reader r(b);
    ReplyHeader h = decode_reply_header(r);
    EXPECT_EQ(h.stat, ReplyStat::Denied);
    EXPECT_EQ(h.reject, RejectStat::AuthError);
    EXPECT_EQ(h.auth, AuthStat::TooWeak);
  }
  {
    ref::Reply d;
    d.xid = 13;
    d.accepted = false;
    d.reject_stat = 0;
    d.low = 2;
    d.high = 2;
    Bytes b = ref::encode_reply(d);
    xdr::Reader r(b);
    ReplyHeader h = decode_reply_header(r);
    EXPECT_EQ(h.reject, RejectStat::RpcMismatch);
    EXPECT_EQ(h.mismatch_low, 2u);
    EXPECT_EQ(h.mismatch_high, 2u);
  }
}

TEST(RpcReply, CallMessageAndBadEnumsRejected) {
  Bytes call = encode(sample_call());
  xdr::Reader rc(call);
  EXPECT_THROW(decode_reply_header(rc), xdr::DecodeError);

  Bytes b = reply([](xdr::Writer& w) { encode_accepted_reply(w, 1, AcceptStat::Success); });
  Bytes bad_stat = b;
  bad_stat[11] = 2;  // reply_stat
  xdr::Reader r1(bad_stat);
  EXPECT_THROW(decode_reply_header(r1), xdr::DecodeError);
  Bytes bad_accept = b;
  bad_accept[23] = 6;  // accept_stat
  xdr::Reader r2(bad_accept);
  EXPECT_THROW(decode_reply_header(r2), xdr::DecodeError);
}

TEST(RpcReply, EveryTruncationRejected) {
  std::vector<Bytes> all = {
      reply([](xdr::Writer& w) { encode_accepted_reply(w, 1, AcceptStat::Success); }),
      reply([](xdr::Writer& w) { encode_prog_mismatch(w, 2, 3, 3); }),
      reply([](xdr::Writer& w) { encode_rpc_mismatch(w, 3); }),
      reply([](xdr::Writer& w) { encode_auth_error(w, 4, AuthStat::BadVerf); }),
  };
  for (const Bytes& b : all) {
    for (std::size_t n = 0; n < b.size(); ++n) {
      xdr::Reader r{std::span<const std::uint8_t>(b).first(n)};
      EXPECT_THROW(decode_reply_header(r), xdr::DecodeError) << n;
    }
  }
}

// Bounded, seeded mutation fuzzing of the three RPC decoders: only DecodeError
// may escape, and the sanitizer build checks nothing is read out of bounds.
TEST(RpcMutation, MutatedHeadersOnlyThrowDecodeError) {
  std::mt19937 rng(99);
  std::vector<Bytes> seeds = {
      encode(sample_call()),
      encode_auth_sys(sample_auth_sys()),
      reply([](xdr::Writer& w) { encode_prog_mismatch(w, 2, 3, 3); }),
      reply([](xdr::Writer& w) { encode_auth_error(w, 4, AuthStat::BadVerf); }),
  };
  int accepted = 0, refused = 0;
  for (int i = 0; i < 4000; ++i) {
    Bytes b = seeds[rng() % seeds.size()];
    for (int e = 0, n = 1 + static_cast<int>(rng() % 3); e < n; ++e) {
      switch (rng() % 3) {
        case 0: if (!b.empty()) b[rng() % b.size()] = static_cast<std::uint8_t>(rng()); break;
        case 1: if (!b.empty()) b.resize(rng() % b.size()); break;
        default:
          if (b.size() >= 4) {
            std::size_t at = (rng() % (b.size() / 4)) * 4;
            std::uint32_t v = (rng() % 2) ? 0xFFFFFFFFu : rng() % 512;
            for (int k = 0; k < 4; ++k) b[at + k] = static_cast<std::uint8_t>(v >> (24 - 8 * k));
          }
      }
    }
    auto attempt = [&](auto fn) {
      try {
        fn();
        ++accepted;
      } catch (const xdr::DecodeError&) {
        ++refused;
      }
    };
    attempt([&] { xdr::Reader r(b); decode_call_header(r); });
    attempt([&] { decode_auth_sys(b); });
    attempt([&] { xdr::Reader r(b); decode_reply_header(r); });
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace nfsgw::rpc
