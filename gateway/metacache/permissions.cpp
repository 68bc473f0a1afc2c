#include "gateway/metacache/permissions.h"

#include <algorithm>

#include "gateway/metacache/store_await.h"

namespace nfsgw::metacache {

cache::CredKey Permissions::key(const Credentials& cred, const nfs3::FileHandle& fh) const {
  return cache::CredKey{{export_id_, fh}, cred.uid, cred.gid, cred.gids};
}

Permit Permissions::decide(std::optional<std::uint32_t> got, const Credentials& cred, const nfs3::Fattr& attr,
                           std::uint32_t bits) const {
  if (got) return *got == bits ? Permit::Yes : Permit::No;
  if (windows_.local_access_check()) return from_mode(cred, attr, bits);
  return Permit::Unknown;
}

std::optional<std::uint32_t> Permissions::answer_now(const Credentials& cred, const nfs3::FileHandle& fh,
                                                     const nfs3::Fattr& attr, std::uint32_t asked,
                                                     cache::AnswerBasis& basis) {
  auto rec = peek_now<cache::AccessRecord>(store_, key(cred, fh), basis);
  if (!rec) return std::nullopt;
  return granted(rec->get(), attr, asked, basis);
}

Awaitable<void> Permissions::load(const Credentials& cred, const nfs3::FileHandle& fh) {
  const auto k = key(cred, fh);
  co_await find<cache::AccessRecord>(store_, k);
}

std::optional<Permit> Permissions::check_now(const Credentials& cred, const nfs3::FileHandle& fh,
                                             const nfs3::Fattr& attr, std::uint32_t bits,
                                             cache::AnswerBasis& basis) {
  auto rec = peek_now<cache::AccessRecord>(store_, key(cred, fh), basis);
  if (!rec) return std::nullopt;
  return decide(granted(rec->get(), attr, bits, basis), cred, attr, bits);
}

Awaitable<Permit> Permissions::check(const Credentials& cred, const nfs3::FileHandle& fh,
                                     const nfs3::Fattr& attr, std::uint32_t bits) {
  cache::AnswerBasis unused;  // a coroutine's answer is never kept
  if (auto now = check_now(cred, fh, attr, bits, unused)) co_return *now;
  auto rec = co_await find<cache::AccessRecord>(store_, key(cred, fh));
  co_return decide(granted(rec.get(), attr, bits, kNoBasis), cred, attr, bits);
}

void Permissions::learn(const Credentials& cred, const nfs3::FileHandle& fh,
                        const nfs3::Fattr& attr, std::uint32_t asked, std::uint32_t granted) {
  const auto stamp = cache::Stamp::of(attr);
  const auto expires = windows_.access_expiry();
  store_.update<cache::AccessRecord>(
      key(cred, fh), [&](const cache::AccessRecord* cur) -> std::optional<cache::AccessRecord> {
        cache::AccessRecord rec{stamp, asked, granted & asked, expires};
        // Answers about the same version of the object add up.
        if (cur != nullptr && cur->object == stamp && windows_.fresh_access(cur->expires, kNoBasis)) {
          rec.asked = cur->asked | asked;
          rec.granted = (cur->granted & ~asked) | (granted & asked);
          rec.expires = std::min(cur->expires, expires);
        }
        return rec;
      });
}

Permit Permissions::from_mode(const Credentials& cred, const nfs3::Fattr& attr, std::uint32_t bits) {
  if (cred.uid == 0) return Permit::Unknown;
  std::uint32_t shift = 0;  // other
  if (cred.uid == attr.uid) {
    shift = 6;
  } else if (cred.gid == attr.gid ||
             std::find(cred.gids.begin(), cred.gids.end(), attr.gid) != cred.gids.end()) {
    shift = 3;
  }
  const std::uint32_t rwx = (attr.mode >> shift) & 7;
  const bool dir = attr.type == nfs3::FileType::Dir;
  std::uint32_t need = 0;
  if (bits & nfs3::access::Read) need |= 4;
  if (bits & (nfs3::access::Modify | nfs3::access::Extend | nfs3::access::Delete)) need |= 2;
  if (bits & (nfs3::access::Lookup | nfs3::access::Execute)) need |= 1;
  if (!dir && (bits & nfs3::access::Lookup)) return Permit::Unknown;
  return (rwx & need) == need ? Permit::Yes : Permit::No;
}

}  // namespace nfsgw::metacache
