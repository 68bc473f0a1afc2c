// The NLM v4 and NSM v1 decoders (protocol/nlm4_codec.cpp, protocol/nlm_nsm_codec.cpp):
// every argument an NLM service or its status monitor callback decodes from a
// client, an origin or statd. A decoder must either refuse with xdr::DecodeError
// or give a value within the protocol's bounds (names and netobjs <= 1024 bytes,
// the FREE_ALL name <= 1025, file handles <= 64) that encodes to exactly the bytes
// it read, apart from padding (encode(decode(x)) as long as what was read, and
// encode(decode(encode(decode(x)))) == encode(decode(x))).
//
// Input: byte 0 picks the type (see kTypes below, by its index modulo their count);
// the rest is its encoding.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/nlm4_types.h"
#include "protocol/nlm_nsm_types.h"
#include "protocol/xdr.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace nfsgw;

template <typename T>
void decode_any(xdr::Reader& r, T& v) {
  if constexpr (requires { nlm4::decode(r, v); }) {
    nlm4::decode(r, v);
  } else {
    nsm::decode(r, v);
  }
}

template <typename T>
void encode_any(xdr::Writer& w, const T& v) {
  if constexpr (requires { nlm4::encode(w, v); }) {
    nlm4::encode(w, v);
  } else {
    nsm::encode(w, v);
  }
}

void check_bounds(const nlm4::Lock& l) {
  FUZZ_CHECK(l.caller_name.size() <= nlm4::kMaxStrLen);
  FUZZ_CHECK(l.oh.size() <= nlm4::kMaxNetobj);
  FUZZ_CHECK(l.fh.len <= nlm4::kMaxFh);
}

template <typename T>
void check_bounds(const T& v) {
  if constexpr (requires { v.cookie; }) FUZZ_CHECK(v.cookie.size() <= nlm4::kMaxNetobj);
  if constexpr (requires { v.lock; }) check_bounds(v.lock);
  if constexpr (requires { v.share; }) {
    FUZZ_CHECK(v.share.caller_name.size() <= nlm4::kMaxStrLen);
    FUZZ_CHECK(v.share.oh.size() <= nlm4::kMaxNetobj);
    FUZZ_CHECK(static_cast<std::uint32_t>(v.share.mode) <= 3 && static_cast<std::uint32_t>(v.share.access) <= 3);
  }
  if constexpr (requires { v.holder; }) FUZZ_CHECK(v.holder.oh.size() <= nlm4::kMaxNetobj);
  if constexpr (requires { v.stat; }) {
    if constexpr (std::is_same_v<decltype(v.stat), nlm4::Stat>) FUZZ_CHECK(nlm4::is_valid(v.stat));
  }
  if constexpr (std::is_same_v<T, nlm4::Notify>) FUZZ_CHECK(v.name.size() <= nlm4::kMaxNameLen);
  if constexpr (requires { v.mon_name; }) FUZZ_CHECK(v.mon_name.size() <= nsm::kMaxStrLen);
  if constexpr (requires { v.my_name; }) FUZZ_CHECK(v.my_name.size() <= nsm::kMaxStrLen);
  if constexpr (requires { v.mon_id; }) {
    FUZZ_CHECK(v.mon_id.mon_name.size() <= nsm::kMaxStrLen);
    FUZZ_CHECK(v.mon_id.my_id.my_name.size() <= nsm::kMaxStrLen);
  }
}

template <typename T>
void round_trip(std::span<const std::uint8_t> in) {
  T v{};
  std::size_t used = 0;
  try {
    xdr::Reader r(in);
    decode_any(r, v);
    used = r.position();
  } catch (const xdr::DecodeError&) {
    return;  // GARBAGE_ARGS
  }
  FUZZ_CHECK(used <= in.size());
  check_bounds(v);
  std::vector<std::uint8_t> once, twice;
  {
    xdr::Writer w(once);
    encode_any(w, v);
  }
  // XDR has one encoding per value (padding bytes aside): what we write is what we read.
  FUZZ_CHECK(once.size() == used);
  T again{};
  xdr::Reader r2(once);
  decode_any(r2, again);
  FUZZ_CHECK(r2.remaining() == 0);
  FUZZ_CHECK(again == v);
  xdr::Writer w2(twice);
  encode_any(w2, again);
  FUZZ_CHECK(once == twice);
}

using Fn = void (*)(std::span<const std::uint8_t>);
// The order is the seeds' first byte (tests/fuzz/corpus/nlm_args): append only.
constexpr Fn kTypes[] = {
    round_trip<nlm4::TestArgs>,    // 0: TEST, TEST_MSG, GRANTED, GRANTED_MSG
    round_trip<nlm4::LockArgs>,    // 1: LOCK, LOCK_MSG, NM_LOCK
    round_trip<nlm4::CancelArgs>,  // 2: CANCEL, CANCEL_MSG
    round_trip<nlm4::UnlockArgs>,  // 3: UNLOCK, UNLOCK_MSG
    round_trip<nlm4::ShareArgs>,   // 4: SHARE, UNSHARE
    round_trip<nlm4::Notify>,      // 5: FREE_ALL
    round_trip<nlm4::Res>,         // 6: LOCK_RES, CANCEL_RES, UNLOCK_RES, GRANTED_RES
    round_trip<nlm4::TestRes>,     // 7: TEST_RES
    round_trip<nlm4::ShareRes>,    // 8: SHARE's result
    round_trip<nsm::SmName>,       // 9: SM_STAT
    round_trip<nsm::Mon>,          // 10: SM_MON
    round_trip<nsm::MonId>,        // 11: SM_UNMON
    round_trip<nsm::MyId>,         // 12: SM_UNMON_ALL
    round_trip<nsm::StatChange>,   // 13: SM_NOTIFY
    round_trip<nsm::Status>,       // 14: statd's callback
    round_trip<nsm::StatRes>,      // 15: SM_STAT / SM_MON results
    round_trip<nsm::SmStat>,       // 16: SM_UNMON / SM_UNMON_ALL results
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  kTypes[data[0] % std::size(kTypes)](std::span<const std::uint8_t>(data + 1, size - 1));
  return 0;
}
