// The duplicate request cache: a retransmitted call that changes the file system
// gets the first call's reply again instead of being executed twice.
//
// A client resends a call whose reply it lost (a timeout, a reconnect) with the
// same xid. Executed again, a REMOVE answers NOENT, an exclusive CREATE EXIST, a
// RENAME fails, and a late SETATTR or WRITE can overwrite a newer change of another
// client. So, as knfsd and nfs-ganesha do, calls of procedures that change the file
// system are remembered by client address (not port: a reconnect changes it), xid,
// program, version, procedure, caller and a checksum of the arguments:
//   - the first is executed, and its reply kept;
//   - a duplicate while the first is in flight waits for the first's reply;
//   - a duplicate after it gets the same reply bytes again.
// Bounded: at most `max_entries` calls are remembered, each for `keep`; the oldest
// finished ones go first. Calls in flight are never dropped, but when the table is
// full of them a new call is executed without being remembered (a lost safety
// net, never a refused call). A reply nfsgw made up to say "try again"
// (NFS3ERR_JUKEBOX) is not kept: the retry must reach the origin.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/clock.h"
#include "gateway/awaitable.h"

namespace nfsgw::rpc {

using Reply = std::vector<std::uint8_t>;

/// What identifies one call for the cache.
struct CallIdentity {
  std::string client;  // address, without the port
  std::uint32_t xid = 0, prog = 0, vers = 0, proc = 0;
  std::uint32_t uid = 0, gid = 0;
  std::span<const std::uint8_t> args;  // checksummed, not kept
};

struct DuplicateCacheOptions {
  std::size_t max_entries = 4096;
  std::chrono::milliseconds keep{std::chrono::minutes(2)};
};

struct DuplicateCacheCounts {
  std::uint64_t replayed = 0;  // duplicates answered with a kept reply
  std::uint64_t waited = 0;    // duplicates that waited for the first's reply
  std::uint64_t entries = 0;   // calls remembered now
};

class DuplicateCache {
 public:
  class Pending;  // a call in flight and the duplicates waiting for it

  /// What begin() found.
  struct Seen {
    enum class Kind { First, Replay, InFlight, Untracked } kind = Kind::Untracked;
    Reply reply;                       // Replay: the reply to send again
    std::shared_ptr<Pending> pending;  // InFlight: wait() on it
    std::string key;                   // First: pass to finish()
  };

  DuplicateCache(DuplicateCacheOptions options, const cache::Clock& clock);
  ~DuplicateCache();

  /// Looks the call up and, when it is new, remembers it as in flight.
  Seen begin(const CallIdentity& call);
  /// The reply of a call begin() said was First (empty: it had none); wakes its
  /// duplicates. `keep` false forgets the call (a reply that must not be replayed).
  void finish(const std::string& key, const Reply& reply, bool keep);
  /// The first call's reply, once it is there (empty when it had none).
  static Awaitable<Reply> wait(std::shared_ptr<Pending> pending);

  DuplicateCacheCounts counts() const;

 private:
  struct Entry;
  void drop_expired(cache::Millis now);
  bool make_room();

  const DuplicateCacheOptions options_;
  const cache::Clock& clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;
  std::list<std::string> finished_;  // oldest first
  std::uint64_t replayed_ = 0, waited_ = 0;
};

/// The key of a call (exposed for tests).
std::string duplicate_key(const CallIdentity& call);

}  // namespace nfsgw::rpc
