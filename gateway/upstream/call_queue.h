// The calls of one upstream connection: those waiting to go to libnfs, those
// inside it, and the AUTH_SYS identity each goes out with. The connection's life
// (connecting, rpcbind, backoff, the watchdog) is UpstreamConnection's; this is
// the other half, and it touches the connection's rpc_context only while the
// connection attaches one (from "up" to its end), on the connection's strand.
//
// libnfs 4.0 encodes a request (a WRITE's data included) the moment it is queued,
// keeps it in its out-queue until the socket takes it, keeps it again until the
// reply, and cannot take a queued request back. So calls are handed to libnfs
// only while what was handed and libnfs has not yet written stays under
// kMaxUnsentBytes (counted from UpstreamCall::payload; libnfs's out-queue is seen
// empty when it no longer asks for POLLOUT, and the connection then calls
// written()); the rest wait here, unencoded. A frozen origin thus holds at most
// that much plus what its socket buffers took, and a call whose client left while
// it waited here is freed at the next sweep, never encoded. Calls still waiting
// when the connection dies were never sent: they go back to the pool as bounced,
// not lost.
//
// libnfs also encodes the context's AUTH when a call is queued, so the identity
// is set right before each call is queued (and only when it changes).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gateway/upstream/upstream_call.h"

namespace nfsgw::upstream {

class CallQueue {
 public:
  using Clock = std::chrono::steady_clock;
  using Calls = std::vector<std::unique_ptr<UpstreamCall>>;

  /// Bytes handed to libnfs and not yet written to the socket beyond which calls
  /// wait here (see the top of this file).
  static constexpr std::size_t kMaxUnsentBytes = 1u << 20;
  /// What a call is counted for besides its payload.
  static constexpr std::size_t kCallBytes = 512;

  /// `label` and `index` name the connection in logs. `answered` runs whenever
  /// the origin answers a call (even with an RPC-level error: it is alive).
  CallQueue(std::string label, std::size_t index, std::function<void()> answered);
  /// Answers what is still here with JUKEBOX.
  ~CallQueue();
  CallQueue(const CallQueue&) = delete;
  CallQueue& operator=(const CallQueue&) = delete;

  /// A call given to the connection (from any thread): counted in load() until it
  /// leaves.
  void expect() { load_.fetch_add(1, std::memory_order_relaxed); }
  /// Calls given and not answered or handed back yet (for load spreading).
  int load() const { return load_.load(std::memory_order_relaxed); }

  /// The connection is up on `rpc` (whose AUTH is libnfs's default).
  void attach(struct rpc_context* rpc);
  /// The connection's context has been destroyed: libnfs has given every call
  /// back (those of a lost connection are in take_lost()).
  void detach();

  /// Takes a call given to the connection. A call whose caller left is answered
  /// and dropped; without an attached context the call is given back (to be
  /// bounced: never sent); otherwise it waits for feed().
  std::unique_ptr<UpstreamCall> add(std::unique_ptr<UpstreamCall> call);
  /// Hands waiting calls to libnfs while the bound allows; true when it sent one.
  bool feed();
  /// libnfs's out-queue was seen empty: the socket took everything handed.
  void written() { unwritten_bytes_ = 0; }

  /// Calls inside libnfs.
  std::size_t in_flight() const { return in_flight_.size(); }
  /// When the oldest call inside libnfs was queued, and its name; only with
  /// in_flight() > 0.
  Clock::time_point oldest_queued() const { return in_flight_.begin()->second.queued; }
  const char* oldest_what() const { return in_flight_.begin()->second.call->what; }

  /// Answers the calls whose client has gone away; those still waiting here go
  /// entirely, those inside libnfs stay until libnfs gives them back.
  void abandon_calls_of_gone_callers();

  /// Calls lost with the connection (queued; the origin may or may not have
  /// executed them), and calls that waited here (never sent); both leave load().
  Calls take_lost();
  Calls take_unsent();
  /// A call that add() gave back leaves load() too.
  void release(const UpstreamCall&) { load_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  static void on_call_cb(struct rpc_context* rpc, int status, void* data, void* call);

  void send_to_libnfs(std::unique_ptr<UpstreamCall> call);
  void apply_credentials(const UpstreamCall& call);
  void drop(std::unique_ptr<UpstreamCall> call);

  std::string label_;
  std::size_t index_;
  std::function<void()> answered_;

  // Everything below is touched only on the connection's strand.
  struct rpc_context* rpc_ = nullptr;
  bool auth_is_default_ = true;
  Credentials auth_cred_;  // what the context's AUTH currently says
  /// Calls inside libnfs, by UpstreamCall::seq (so the first is the oldest).
  struct InFlight {
    Clock::time_point queued;
    UpstreamCall* call;
  };
  std::map<std::uint64_t, InFlight> in_flight_;
  /// Calls given to the connection and not yet to libnfs, oldest first.
  std::deque<std::unique_ptr<UpstreamCall>> unsent_;
  /// Calls a lost connection gave back, handed to the pool once libnfs returns.
  Calls lost_;
  /// Bytes handed to libnfs since its out-queue was last seen empty.
  std::size_t unwritten_bytes_ = 0;
  std::uint64_t next_seq_ = 1;

  std::atomic<int> load_{0};
};

}  // namespace nfsgw::upstream
