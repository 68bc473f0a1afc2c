// Who owns a lock: each lock owner of each client (its address, the caller_name
// its NLM sends, its owner handle and svid) gets a distinct owner at the origin,
// because nfsgw takes every lock there in its own name.
//
// The origin owner is numbered, not hashed: an id unique among the owners this
// map holds, which is the svid, and an owner handle "nfsgw/<instance>/<id>". Two
// client owners can therefore never share an origin owner (a hash could collide,
// and two owners merged at the origin would no longer exclude each other). The
// handle is printable because libnfs's NLM client sends owner handles as C
// strings. `instance` tells this run of nfsgw from the one before a restart, so
// owners of the old run are never taken for new ones.
//
// The map is bounded (max_owners): acquire() past it gives no owner, and the
// caller answers NLM4_DENIED_NOLOCKS. Not thread-safe: its owner serializes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/nlm4_types.h"

namespace nfsgw::nlm {

/// An owner's number in this map; also its svid at the origin. Never 0.
using OwnerId = std::uint32_t;

/// A lock owner as a client names it.
struct ClientOwner {
  std::string address;      // the client's network address, as the server saw it
  std::string caller_name;  // nlm4_lock.caller_name (the host its statd monitors)
  nlm4::Netobj oh;          // the owner handle
  std::int32_t svid = 0;
  friend bool operator==(const ClientOwner&, const ClientOwner&) = default;
};

/// The same owner as nfsgw names it at the origin.
struct OriginOwner {
  nlm4::Netobj oh;
  std::int32_t svid = 0;
  friend bool operator==(const OriginOwner&, const OriginOwner&) = default;
};

class OwnerMap {
 public:
  /// `instance`: 1..64 printable ASCII bytes without '/' (throws std::invalid_argument).
  OwnerMap(std::string instance, std::size_t max_owners);

  /// The owner's id, made when it has none; nullopt when the map is full.
  std::optional<OwnerId> acquire(const ClientOwner& owner);
  std::optional<OwnerId> find(const ClientOwner& owner) const;
  /// The origin's owner back to ours (an origin's GRANTED callback names it).
  std::optional<OwnerId> find(const OriginOwner& owner) const;

  /// nullptr / nullopt for an id the map does not hold.
  const ClientOwner* client(OwnerId id) const;
  std::optional<OriginOwner> origin(OwnerId id) const;

  /// Every owner whose caller_name is `caller_name` (a host that rebooted), in id order.
  std::vector<OwnerId> owners_of(std::string_view caller_name) const;
  /// The caller names of every owner (the client hosts that hold or wait for something).
  std::set<std::string> caller_names() const;

  /// Drops the owner. The caller does so only when it holds nothing at the
  /// origin any more: its id may then be given to another owner.
  void forget(OwnerId id);

  std::size_t size() const { return by_id_.size(); }
  std::size_t max_owners() const { return max_owners_; }
  const std::string& instance() const { return instance_; }

 private:
  struct KeyHash {
    std::size_t operator()(const ClientOwner& o) const;
  };
  /// "nfsgw/<instance>/<id>".
  nlm4::Netobj origin_handle(OwnerId id) const;
  std::optional<OwnerId> parse_origin_handle(const nlm4::Netobj& oh) const;

  std::string instance_;
  std::size_t max_owners_;
  OwnerId next_ = 1;
  std::unordered_map<ClientOwner, OwnerId, KeyHash> by_owner_;
  std::unordered_map<OwnerId, ClientOwner> by_id_;
};

}  // namespace nfsgw::nlm
