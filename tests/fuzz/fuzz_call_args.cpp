// Every NFSv3 argument decoder (protocol/nfs3_codec*) and the MOUNT argument
// decoders (protocol/mount3_codec.cpp), as the dispatch table runs them on the
// bytes after a call's header. A decoder must either refuse with
// xdr::DecodeError or give a value that encodes to bytes which decode to the
// same value again (encode(decode(encode(decode(x)))) == encode(decode(x))), no
// longer than what was read.
//
// Input: byte 0 picks the procedure (0..21: NFSv3 NULL..COMMIT, 22: MOUNT MNT,
// 23: MOUNT UMNT; the other MOUNT procedures take no arguments); the rest is the
// procedure's arguments.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/mount3_types.h"
#include "protocol/nfs3_codec.h"
#include "protocol/nfs3_types.h"
#include "protocol/xdr.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace nfsgw;

template <typename Args>
void round_trip(std::span<const std::uint8_t> in) {
  Args v{};
  std::size_t used = 0;
  try {
    xdr::Reader r(in);
    if constexpr (std::is_same_v<Args, mount3::MntArgs> || std::is_same_v<Args, mount3::UmntArgs>) {
      mount3::decode(r, v);
    } else {
      nfs3::decode(r, v);
    }
    used = r.position();
  } catch (const xdr::DecodeError&) {
    return;  // GARBAGE_ARGS
  }
  FUZZ_CHECK(used <= in.size());
  std::vector<std::uint8_t> once, twice;
  {
    xdr::Writer w(once);
    if constexpr (std::is_same_v<Args, mount3::MntArgs> || std::is_same_v<Args, mount3::UmntArgs>) {
      mount3::encode(w, v);
    } else {
      nfs3::encode(w, v);
    }
  }
  // XDR has one encoding per value (padding bytes aside): what we write is what we read.
  FUZZ_CHECK(once.size() == used);
  Args again{};
  xdr::Reader r2(once);
  if constexpr (std::is_same_v<Args, mount3::MntArgs> || std::is_same_v<Args, mount3::UmntArgs>) {
    mount3::decode(r2, again);
    xdr::Writer w(twice);
    mount3::encode(w, again);
  } else {
    nfs3::decode(r2, again);
    xdr::Writer w(twice);
    nfs3::encode(w, again);
  }
  FUZZ_CHECK(r2.remaining() == 0);
  FUZZ_CHECK(once == twice);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::span<const std::uint8_t> in(data + 1, size - 1);
  switch (data[0] % 24) {
    case 0: break;  // NULL: no arguments
    case 1: round_trip<nfs3::GetattrArgs>(in); break;
    case 2: round_trip<nfs3::SetattrArgs>(in); break;
    case 3: round_trip<nfs3::LookupArgs>(in); break;
    case 4: round_trip<nfs3::AccessArgs>(in); break;
    case 5: round_trip<nfs3::ReadlinkArgs>(in); break;
    case 6: round_trip<nfs3::ReadArgs>(in); break;
    case 7: round_trip<nfs3::WriteArgs>(in); break;
    case 8: round_trip<nfs3::CreateArgs>(in); break;
    case 9: round_trip<nfs3::MkdirArgs>(in); break;
    case 10: round_trip<nfs3::SymlinkArgs>(in); break;
    case 11: round_trip<nfs3::MknodArgs>(in); break;
    case 12: round_trip<nfs3::RemoveArgs>(in); break;
    case 13: round_trip<nfs3::RmdirArgs>(in); break;
    case 14: round_trip<nfs3::RenameArgs>(in); break;
    case 15: round_trip<nfs3::LinkArgs>(in); break;
    case 16: round_trip<nfs3::ReaddirArgs>(in); break;
    case 17: round_trip<nfs3::ReaddirplusArgs>(in); break;
    case 18: round_trip<nfs3::FsstatArgs>(in); break;
    case 19: round_trip<nfs3::FsinfoArgs>(in); break;
    case 20: round_trip<nfs3::PathconfArgs>(in); break;
    case 21: round_trip<nfs3::CommitArgs>(in); break;
    case 22: round_trip<mount3::MntArgs>(in); break;
    case 23: round_trip<mount3::UmntArgs>(in); break;
  }
  return 0;
}
