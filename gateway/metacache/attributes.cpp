#include "gateway/metacache/attributes.h"

#include "gateway/metacache/store_await.h"

namespace nfsgw::metacache {
namespace {

bool before(const nfs3::Time& a, const nfs3::Time& b) {
  return a.seconds != b.seconds ? a.seconds < b.seconds : a.nseconds < b.nseconds;
}

/// Would `incoming` (sent as `seq`) go back in time over `current`?
bool older(const nfs3::Fattr& incoming, std::uint64_t seq, const cache::AttrRecord& current) {
  if (incoming.fileid == current.attr.fileid) {
    if (before(incoming.ctime, current.attr.ctime)) return true;
    if (before(current.attr.ctime, incoming.ctime)) return false;
  }
  return seq < current.seq;
}

}  // namespace

Awaitable<AttrPtr> Attributes::cached(const nfs3::FileHandle& fh) {
  co_return co_await find<cache::AttrRecord>(store_, key(fh));
}

AttrPtr Attributes::in_memory(const nfs3::FileHandle& fh) {
  auto p = store_.peek<cache::AttrRecord>(key(fh));
  return p.where == cache::MetadataStore::Where::Memory ? p.value : nullptr;
}

Awaitable<AttrPtr> Attributes::learn(const nfs3::FileHandle& fh, const nfs3::Fattr& attr,
                                     std::uint64_t seq, const InPlace* in_place) {
  const auto k = key(fh);
  // Bring a record that is only on disk into memory first, so that the rules
  // below compare against it rather than against nothing.
  if (store_.peek<cache::AttrRecord>(k).where == cache::MetadataStore::Where::OnDisk)
    co_await find<cache::AttrRecord>(store_, k);
  AttrPtr result;
  store_.update<cache::AttrRecord>(
      k, [&](const cache::AttrRecord* cur) -> std::optional<cache::AttrRecord> {
        if (cur != nullptr && older(attr, seq, *cur)) {
          result = std::make_shared<const cache::AttrRecord>(*cur);
          return std::nullopt;
        }
        cache::AttrRecord rec;
        rec.attr = attr;
        rec.seq = seq;
        rec.expires = windows_.attr_expiry(attr);
        const bool unchanged = cur != nullptr && cache::Stamp::of(cur->attr) == cache::Stamp::of(attr);
        const bool applied = cur != nullptr && in_place != nullptr && cur->gen == in_place->gen &&
                             same_as(in_place->before, cur->attr);
        rec.gen = (unchanged || applied) ? cur->gen : seq_.next();
        result = std::make_shared<const cache::AttrRecord>(rec);
        return rec;
      });
  co_return result;
}

}  // namespace nfsgw::metacache
