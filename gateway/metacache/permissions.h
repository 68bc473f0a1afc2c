// Whether a caller may be given a cached answer: a cached answer goes only to a
// caller who could have got it from the origin.
//
// Known from an ACCESS answer the origin gave for the same credential (uid, gid and
// groups after squash) about the same version of the object (its Stamp: a chmod or
// chown changes ctime), inside access_ttl; or, only on exports that set
// access_check = "local", from the cached mode bits, owner and group. Anything
// else is Unknown, and the call goes to the origin.
#pragma once

#include <cstdint>
#include <optional>

#include "cache/metadata_store.h"
#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "gateway/metacache/windows.h"

namespace nfsgw::metacache {

enum class Permit { Yes, No, Unknown };

class Permissions {
 public:
  Permissions(cache::MetadataStore& store, const Windows& windows, std::uint32_t export_id)
      : store_(store), windows_(windows), export_id_(export_id) {}

  /// May `cred` do `bits` (nfs3::access::*) on the object with attributes `attr`?
  Awaitable<Permit> check(const Credentials& cred, const nfs3::FileHandle& fh,
                          const nfs3::Fattr& attr, std::uint32_t bits);
  /// check() when the answer needs no wait (no record only on disk); else nullopt.
  /// What it read is added to `basis`.
  std::optional<Permit> check_now(const Credentials& cred, const nfs3::FileHandle& fh,
                                  const nfs3::Fattr& attr, std::uint32_t bits, cache::AnswerBasis& basis);
  /// An ACCESS answer of the origin: `granted` out of `asked`, for the object whose
  /// attributes came with it.
  void learn(const Credentials& cred, const nfs3::FileHandle& fh, const nfs3::Fattr& attr,
             std::uint32_t asked, std::uint32_t granted);
  /// A cached ACCESS answer covering `asked`: the granted subset; nullopt when
  /// there is none in memory. What it read is added to `basis`.
  std::optional<std::uint32_t> answer_now(const Credentials& cred, const nfs3::FileHandle& fh,
                                          const nfs3::Fattr& attr, std::uint32_t asked,
                                          cache::AnswerBasis& basis);
  /// Brings `cred`'s ACCESS record of `fh` into memory when it is only on disk, so
  /// that check_now() and answer_now() can read it.
  Awaitable<void> load(const Credentials& cred, const nfs3::FileHandle& fh);

  /// POSIX permission bits (no ACLs) for access_check = "local"; Unknown for uid 0,
  /// whom the origin may squash.
  static Permit from_mode(const Credentials& cred, const nfs3::Fattr& attr, std::uint32_t bits);

 private:
  cache::CredKey key(const Credentials& cred, const nfs3::FileHandle& fh) const;
  /// The granted subset of `asked` from `rec`, when it answers for `attr`;
  /// `basis`: an answer's basis or kNoBasis (windows.h).
  template <typename B>
  std::optional<std::uint32_t> granted(const cache::AccessRecord* rec, const nfs3::Fattr& attr,
                                       std::uint32_t asked, B&& basis) const {
    if (!rec || rec->object != cache::Stamp::of(attr) || !windows_.fresh_access(rec->expires, basis) ||
        (asked & ~rec->asked) != 0) {
      return std::nullopt;
    }
    return rec->granted & asked;
  }
  Permit decide(std::optional<std::uint32_t> granted, const Credentials& cred, const nfs3::Fattr& attr,
                std::uint32_t bits) const;

  cache::MetadataStore& store_;
  const Windows& windows_;
  std::uint32_t export_id_;
};

}  // namespace nfsgw::metacache
