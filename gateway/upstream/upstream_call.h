// One call on its way to the origin, as the connection and the pool see it.
//
// The pool does not know procedure types: a call knows how to queue itself on a
// libnfs rpc_context, how to copy its reply out of libnfs's buffers, and how to
// answer when no reply will come. Exactly one of on_reply / on_fail is called, and
// the owner deletes the call right after (or, for a call abandoned while libnfs
// still holds it, once libnfs gives it back). Both run on the connection's strand,
// or the pool's caller's thread, and must not block: they only copy and post the
// answer to the caller's executor.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "gateway/call_context.h"
#include "protocol/nfs3_types.h"

struct rpc_context;  // libnfs; deliberately not included here

namespace nfsgw::upstream {

/// libnfs's rpc_cb, spelled without including libnfs.
using RpcCallback = void (*)(struct rpc_context* rpc, int status, void* data, void* private_data);

class UpstreamCall {
 public:
  virtual ~UpstreamCall() = default;

  /// Queues the request on `rpc` with `cb`/`private_data`; returns libnfs's result
  /// (0 when queued; then `cb` is guaranteed to run exactly once).
  virtual int queue(struct rpc_context* rpc, RpcCallback cb, void* private_data) = 0;
  /// The origin answered: `data` is libnfs's decoded result, freed after return.
  virtual void on_reply(void* data) = 0;
  /// No usable answer: reply to the caller with `status`, a status nfsgw makes up
  /// (JUKEBOX for a call lost with its connection or refused after stop(),
  /// SERVERFAULT for a reply-level RPC failure or a call that cannot be queued,
  /// ACCES for a credential the origin rejected at the RPC level; see
  /// rpc_error_class.h). An NFSv3 result built from it has gateway_status set
  /// (protocol/nfs3_types.h), so that no cache stores it.
  virtual void on_fail(nfs3::Status status) = 0;

  /// May be sent again after its connection died (see upstream_pool.h).
  bool idempotent = true;
  /// AUTH_SYS identity to send; empty: the connection's default (the gateway itself).
  std::optional<Credentials> cred;
  /// Procedure name, for logs.
  const char* what = "?";
  /// Bytes it sends beyond its small arguments (a WRITE's data): what the
  /// connection counts against the bytes it lets wait inside libnfs.
  std::size_t payload = 0;
  /// Set by the connection while the call is inside libnfs.
  void* owner = nullptr;
  /// The connection's number for the call while it is inside libnfs (its timeout).
  std::uint64_t seq = 0;
  /// Raised when the client connection that asked for this call has closed
  /// (CallContext::caller_gone); null: never.
  std::shared_ptr<const std::atomic<bool>> caller_gone;
  /// Set once abandon() answered it: never send it again (what it would send
  /// may be gone with its caller), only delete it when libnfs gives it back.
  bool abandoned = false;

  /// True when its caller has gone away.
  bool caller_left() const {
    return caller_gone && caller_gone->load(std::memory_order_relaxed);
  }
  /// Its caller has gone away: answers it now with JUKEBOX (a reply nobody will
  /// read; this frees the waiting coroutine and what it holds) and marks it
  /// abandoned. Once only.
  void abandon() {
    if (abandoned) return;
    abandoned = true;
    on_fail(nfs3::Status::Jukebox);
  }
};

}  // namespace nfsgw::upstream
