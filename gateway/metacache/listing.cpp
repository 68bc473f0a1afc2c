#include "gateway/metacache/listing.h"

#include <algorithm>

namespace nfsgw::metacache {
namespace {

std::uint32_t xdr_string(std::size_t n) { return 4 + static_cast<std::uint32_t>((n + 3) & ~std::size_t{3}); }

bool by_cookie(const cache::ListingEntry& a, const cache::ListingEntry& b) { return a.cookie < b.cookie; }

/// A cookie for `name` not used in `l` (a hash collision moves to the next free one).
std::uint64_t free_cookie(const std::vector<cache::ListingEntry>& sorted, const std::string& name) {
  std::uint64_t c = cache::listing_cookie(name);
  auto it = std::lower_bound(sorted.begin(), sorted.end(), cache::ListingEntry{c, 0, {}, {}}, by_cookie);
  while (it != sorted.end() && it->cookie == c) {
    ++c;
    if (c == 0 || c > (1ull << 63) - 1) c = 1;
    it = std::lower_bound(sorted.begin(), sorted.end(), cache::ListingEntry{c, 0, {}, {}}, by_cookie);
  }
  return c;
}

}  // namespace

ListingPtr build_listing(std::vector<cache::ListingEntry> entries, std::uint64_t gen) {
  for (auto& e : entries) e.cookie = cache::listing_cookie(e.name);
  std::sort(entries.begin(), entries.end(), by_cookie);
  // Resolve collisions: later duplicates move to the next free cookie.
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].cookie != entries[i - 1].cookie) continue;
    cache::ListingEntry moved = std::move(entries[i]);
    entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
    moved.cookie = free_cookie(entries, moved.name);
    entries.insert(std::upper_bound(entries.begin(), entries.end(), moved, by_cookie), std::move(moved));
    i = 0;  // rare: rescan
  }
  auto l = std::make_shared<cache::ListingRecord>();
  l->dir_gen = gen;
  l->entries = std::move(entries);
  return l;
}

ListingPtr without_entry(const cache::ListingRecord& l, std::uint64_t gen, const std::string& name) {
  auto out = std::make_shared<cache::ListingRecord>();
  out->dir_gen = gen;
  out->entries.reserve(l.entries.size());
  for (const auto& e : l.entries)
    if (e.name != name) out->entries.push_back(e);
  return out;
}

ListingPtr with_entry(const cache::ListingRecord& l, std::uint64_t gen, const std::string& name,
                      std::uint64_t fileid, const nfs3::FileHandle& child) {
  auto out = std::const_pointer_cast<cache::ListingRecord>(without_entry(l, gen, name));
  cache::ListingEntry e{0, fileid, name, child};
  e.cookie = free_cookie(out->entries, name);
  out->entries.insert(std::upper_bound(out->entries.begin(), out->entries.end(), e, by_cookie),
                      std::move(e));
  return out;
}

EntrySize readdir_entry_size(const cache::ListingEntry& e) {
  const std::uint32_t info = 8 + xdr_string(e.name.size()) + 8;
  return {info, 4 + info};
}

EntrySize readdirplus_entry_size(const cache::ListingEntry& e, bool with_attributes) {
  const std::uint32_t info = 8 + xdr_string(e.name.size()) + 8;
  const std::uint32_t attrs = 4 + (with_attributes ? 84 : 0);
  const std::uint32_t handle = 4 + xdr_string(nfs3::kFhSize);
  return {info, 4 + info + attrs + handle};
}

std::size_t resume_at(const cache::ListingRecord& l, std::uint64_t cookie) {
  if (cookie == 0) return 0;
  auto it = std::upper_bound(l.entries.begin(), l.entries.end(), cache::ListingEntry{cookie, 0, {}, {}},
                             by_cookie);
  return static_cast<std::size_t>(it - l.entries.begin());
}

}  // namespace nfsgw::metacache
