// What a layer knows about the call it serves: who asked, from where, for which export.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
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

struct CallContext {
  Credentials cred;
  std::uint32_t xid = 0;
  std::string client_address;  // textual peer address, for logs
  std::uint32_t export_id = 0; // set once the file handle has been verified
  std::uint32_t proc_flags = 0;  // rpc::flags of the procedure (Mutates, Idempotent, ...)
  /// Raised (true) by the server once the caller's connection has closed: nobody
  /// will read this call's reply, so work still waiting for the origin on its
  /// behalf is abandoned (gateway/upstream/upstream_pool.h). Null: never raised.
  std::shared_ptr<const std::atomic<bool>> caller_gone;
};

/// The context for work other callers may wait on too (a shared fetch, read-ahead,
/// a background lookup of a permission): it goes on whoever of them leaves.
inline CallContext shared_work(const CallContext& ctx) {
  CallContext shared = ctx;
  shared.caller_gone.reset();
  return shared;
}

}  // namespace nfsgw
