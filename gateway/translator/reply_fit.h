// READDIR and READDIRPLUS replies cut to the client's count/maxcount (RFC 1813
// 3.3.16, 3.3.17). The gateway's handles are longer than most origins' (up to 22
// bytes more per entry, cache/handle_codec.h), so a page the origin filled to the
// client's maxcount can outgrow it once its handles are the gateway's. The entries
// that do not fit are dropped from the end and eof becomes false: the client goes
// on from the last entry it got, by its cookie, and gets the rest next time.
#pragma once

#include <cstdint>

#include "protocol/nfs3_types.h"

namespace nfsgw {

/// Drops trailing entries until the encoded result is at most `limit` bytes. When
/// not even the first entry fits, the result becomes NFS3ERR_TOOSMALL (nfsgw's own
/// status, with the directory's attributes). Returns how many entries were dropped.
std::size_t fit_reply(nfs3::ReaddirRes& res, std::uint32_t limit);
std::size_t fit_reply(nfs3::ReaddirplusRes& res, std::uint32_t limit);

}  // namespace nfsgw
