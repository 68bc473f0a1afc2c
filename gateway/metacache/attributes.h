// Learning attributes from the origin's replies, with the two rules that keep the
// attribute cache truthful:
//  - an older reply never overwrites a newer entry: ctime decides, then the order
//    in which the gateway sent the calls (a sequence number of its own);
//  - the generation (cache/metadata_records.h) is kept while the object is
//    unchanged, or changed only by a call through nfsgw whose effect the caller has
//    applied in place; anything else is a new generation, which drops every
//    lookup and listing learnt under the old one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "cache/metadata_store.h"
#include "gateway/awaitable.h"
#include "gateway/metacache/windows.h"

namespace nfsgw::metacache {

/// Increasing across restarts (it starts from the wall clock in microseconds), so
/// records written before a restart compare as older than replies after it.
class Sequence {
 public:
  explicit Sequence(cache::Millis now) : next_(static_cast<std::uint64_t>(now) * 1000) {}
  std::uint64_t next() { return next_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> next_;
};

/// The change a caller applied to dependent entries under `gen`, made by a call
/// whose WCC pre-op attributes were `before`.
struct InPlace {
  nfs3::WccAttr before;
  std::uint64_t gen = 0;
};

/// True when the WCC pre-op attributes describe exactly the cached attributes.
inline bool same_as(const nfs3::WccAttr& before, const nfs3::Fattr& cached) {
  return before.size == cached.size && before.mtime == cached.mtime && before.ctime == cached.ctime;
}

using AttrPtr = std::shared_ptr<const cache::AttrRecord>;

/// Is the record now held (as returned by Attributes::learn) about the same
/// version of the object as the attributes that came with a reply? Only then may
/// what the reply says be kept under the record's generation. (Comparing the
/// stamp, not the sequence number: a later reply about the same version, such as
/// an ACCESS answered meanwhile, must not make a listing unkeepable.)
inline bool describes(const AttrPtr& rec, const nfs3::Fattr& attr) {
  return rec && cache::Stamp::of(rec->attr) == cache::Stamp::of(attr);
}

class Attributes {
 public:
  Attributes(cache::MetadataStore& store, const Windows& windows, std::uint32_t export_id,
             Sequence& sequence)
      : store_(store), windows_(windows), export_id_(export_id), seq_(sequence) {}

  cache::ObjectKey key(const nfs3::FileHandle& fh) const { return {export_id_, fh}; }
  std::uint64_t next_seq() { return seq_.next(); }

  /// The cached record (memory or disk), fresh or not; nullptr when unknown.
  Awaitable<AttrPtr> cached(const nfs3::FileHandle& fh);
  /// The cached record when it is in memory (no wait); nullptr otherwise.
  AttrPtr in_memory(const nfs3::FileHandle& fh);

  /// Stores what the origin said in a reply to a call sent as `seq`. Returns the
  /// record now held (the incoming one, or a newer one that was kept).
  Awaitable<AttrPtr> learn(const nfs3::FileHandle& fh, const nfs3::Fattr& attr, std::uint64_t seq,
                           const InPlace* in_place = nullptr);
  Awaitable<void> learn(const nfs3::FileHandle& fh, const nfs3::PostOpAttr& attr, std::uint64_t seq) {
    if (attr) co_await learn(fh, *attr, seq);
  }

  void forget(const nfs3::FileHandle& fh) { store_.erase<cache::AttrRecord>(key(fh)); }

 private:
  cache::MetadataStore& store_;
  const Windows& windows_;
  std::uint32_t export_id_;
  Sequence& seq_;
};

}  // namespace nfsgw::metacache
