// Whole directory listings: built from the origin's pages, changed in place by the
// gateway's own CREATE/REMOVE/RENAME/LINK, and cut into pages for each client's
// READDIR count or READDIRPLUS dircount/maxcount.
//
// Cookies are the gateway's own: a stable hash of the name (cache::listing_cookie),
// entries sorted by it. A client resuming at cookie c gets the entries above c, so
// paging stays consistent while the listing is replaced underneath it: names that
// stayed are neither skipped nor repeated. The cookie verifier is constant.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/metadata_records.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::metacache {

using ListingPtr = std::shared_ptr<const cache::ListingRecord>;

/// The verifier nfsgw gives with its listings (it accepts any back).
inline constexpr nfs3::CookieVerf kCookieVerf{'n', 'f', 's', 'g', 'w', 'l', 's', '1'};

/// A listing of `entries` (their cookies are assigned here) under generation `gen`.
ListingPtr build_listing(std::vector<cache::ListingEntry> entries, std::uint64_t gen);
/// A copy of `l` under `gen` with `name` added (or replaced).
ListingPtr with_entry(const cache::ListingRecord& l, std::uint64_t gen, const std::string& name,
                      std::uint64_t fileid, const nfs3::FileHandle& child);
/// A copy of `l` under `gen` without `name` (the same listing when absent).
ListingPtr without_entry(const cache::ListingRecord& l, std::uint64_t gen, const std::string& name);

/// XDR bytes of one entry of a reply, as the client's limits count them.
struct EntrySize {
  std::uint32_t dir_info;  // fileid + name + cookie (READDIRPLUS dircount)
  std::uint32_t reply;     // the whole entry in the reply
};
EntrySize readdir_entry_size(const cache::ListingEntry& e);
/// READDIRPLUS: sized for the longest handle the client may get (the gateway's
/// handles are longer than the origin's) and attributes when present.
EntrySize readdirplus_entry_size(const cache::ListingEntry& e, bool with_attributes);
/// Bytes of a READDIR/READDIRPLUS resok around its entries.
inline constexpr std::uint32_t kReaddirReplyOverhead = 4 + 4 + 84 + 8 + 4 + 4;

/// The index of the first entry after cookie `cookie` (0: the first entry).
std::size_t resume_at(const cache::ListingRecord& l, std::uint64_t cookie);

}  // namespace nfsgw::metacache
