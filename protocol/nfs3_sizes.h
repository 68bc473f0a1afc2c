// Encoded sizes of NFSv3 results, without encoding them: what a layer needs to keep
// a READDIR or READDIRPLUS reply within the client's count/maxcount (RFC 1813
// 3.3.16, 3.3.17), and the largest READ/WRITE payload that fits in an RPC record.
// Each size equals the bytes nfs3_codec.h writes (tests compare them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/nfs3_types.h"

namespace nfsgw::nfs3 {

/// XDR bytes of a string or variable opaque of `n` bytes: length word plus padding.
constexpr std::size_t xdr_var_size(std::size_t n) { return 4 + ((n + 3) & ~std::size_t{3}); }

/// One entry of a reply's list, with its "value follows" word.
std::size_t encoded_size(const DirEntry& e);
std::size_t encoded_size(const DirEntryPlus& e);
/// The whole result as encoded: status, directory attributes and, when Ok, the
/// verifier, the entries, the list's end and eof. Clients' count and maxcount
/// bound the READDIR3resok; nfsgw counts the status word too, to be safe.
std::size_t encoded_size(const ReaddirRes& r);
std::size_t encoded_size(const ReaddirplusRes& r);

/// Bytes of an RPC CALL header at most: xid, type, rpcvers, prog, vers, proc, then
/// credential and verifier of up to 400 bytes of body each (RFC 5531).
inline constexpr std::size_t kMaxCallHeaderBytes = 6 * 4 + 2 * (4 + 4 + 400);
/// WRITE3args around its data: handle (length + 64), offset, count, stable, the
/// data's length word.
inline constexpr std::size_t kWriteArgsOverhead = 4 + kFhSize + 8 + 4 + 4 + 4;

/// The largest READ/WRITE payload a server accepting records of `record_bytes`
/// can take: the record less the largest call header and WRITE's own fields, at
/// most kMaxData, rounded down to a multiple of 4 KiB (clients use pages); 0
/// when not even 4 KiB fits.
std::uint32_t max_transfer_for_record(std::size_t record_bytes);

}  // namespace nfsgw::nfs3
