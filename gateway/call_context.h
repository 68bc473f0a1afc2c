// What a layer knows about the call it serves: who asked, from where, for which export.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "protocol/auth_groups.h"

namespace nfsgw {

/// AUTH_SYS credentials after the export's squash rule (AUTH_NONE callers arrive
/// here already mapped to the export's anonymous uid/gid).
struct Credentials {
  std::uint32_t uid = 65534;
  std::uint32_t gid = 65534;
  AuthGroups gids;
  std::string machine_name;
  /// The caller sent AUTH_NONE: the export's anonymous ids apply whatever its squash.
  bool auth_none = false;
};

/// One client connection's "the client has gone" flag, raised by the server once
/// the connection has closed (gateway/server/connection.h). Always owned by a
/// shared_ptr (the connection's): calls see it through a plain pointer, and only
/// work that may outlive its call (a call sent to the origin) takes a share of it
/// (weak_from_this), so a call served from the caches costs no reference count.
/// Work that waits without polling (a waiter of a shared fetch, single_flight.h)
/// asks to be told when it rises (on_raise).
class CallerGone : public std::enable_shared_from_this<CallerGone> {
 public:
  std::atomic<bool> raised{false};

  bool is_raised() const { return raised.load(std::memory_order_relaxed); }
  /// Raises the flag and runs, on this thread, every hook still registered. Once.
  void raise() {
    std::vector<std::pair<std::uint64_t, std::function<void()>>> hooks;
    {
      std::lock_guard lock(mu_);
      if (raised.exchange(true, std::memory_order_relaxed)) return;
      hooks.swap(hooks_);
    }
    for (auto& h : hooks) h.second();
  }
  /// Keeps `hook` to be run once when the flag rises (it should only post or
  /// hand over work). Returns its id for forget(), or 0 when the flag is raised
  /// already: then `hook` is not kept and not run.
  std::uint64_t on_raise(std::function<void()> hook) const {
    std::lock_guard lock(mu_);
    if (raised.load(std::memory_order_relaxed)) return 0;
    hooks_.emplace_back(++last_id_, std::move(hook));
    return last_id_;
  }
  /// Drops the hook `id` unless it has run (or is running) already.
  void forget(std::uint64_t id) const {
    std::lock_guard lock(mu_);
    for (auto it = hooks_.begin(); it != hooks_.end(); ++it) {
      if (it->first == id) {
        hooks_.erase(it);
        return;
      }
    }
  }

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::pair<std::uint64_t, std::function<void()>>> hooks_;
  mutable std::uint64_t last_id_ = 0;
};

struct CallContext {
  Credentials cred;
  std::uint32_t xid = 0;
  std::string client_address;  // textual peer address, for logs
  std::uint32_t export_id = 0; // set once the file handle has been verified
  std::uint32_t proc_flags = 0;  // rpc::flags of the procedure (Mutates, Idempotent, ...)
  /// The caller's connection's flag: nobody will read this call's reply once it is
  /// raised, so work still waiting for the origin on its behalf is abandoned
  /// (gateway/upstream/upstream_pool.h). Null: never raised. Valid while the call
  /// runs (the connection outlives its calls); work that may run after the call's
  /// answer (detached, or shared with other callers) must not keep it: give it
  /// shared_work(ctx) instead.
  const CallerGone* caller_gone = nullptr;
  /// An answer given at once reads its records through the metadata store's
  /// shared memory layer, not this thread's memo: the dispatcher's answer memo
  /// asks this every so often, so that the records it replays stay hot in the
  /// store's LRU order (gateway/rpc/answer_memo.h).
  bool refresh_records = false;
  /// Set by a layer that asks the layer below for an answer step it may not use
  /// (the data cache's READ step asks for the file's attributes and permission,
  /// then may pass the call on): the answer's counters are noted in its basis, not
  /// bumped (cache::AnswerBasis, count_later); the asker bumps them if it uses it.
  bool tentative = false;

  bool caller_left() const { return caller_gone != nullptr && caller_gone->is_raised(); }
};

/// The context for work other callers may wait on too (a shared fetch, read-ahead,
/// a background lookup of a permission): it goes on whoever of them leaves.
inline CallContext shared_work(const CallContext& ctx) {
  CallContext shared = ctx;
  shared.caller_gone = nullptr;
  return shared;
}

}  // namespace nfsgw
