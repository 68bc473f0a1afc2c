// OriginLocks against a real origin (issue 21): the origin's NLM v4 (TEST, LOCK,
// CANCEL, UNLOCK; NULL as a probe) and its statd's SM_NOTIFY, through libnfs 4.0's
// raw client calls, each program on a connection of its own (OriginRpcChannel:
// made on the first call, dropped on a failure, made again on the next call).
//
// Ports: NLM 100021 v4/TCP and statd 100024 v1/TCP are asked from the origin's
// rpcbind unless given (a port of 0 asks rpcbind). Every call ends within
// `call_timeout` (connecting included): NoAnswer when sent and not answered,
// Unreachable when never sent or refused at the RPC level (origin_rpc_channel.h).
//
// Credentials: each call goes out with the caller's AUTH_SYS identity as given
// (after the export's squash; root only when the caller was root after squash),
// set on the connection right before the call is queued; its machine name is the
// caller's, or nfsgw's caller name when empty. statd's SM_NOTIFY goes out as
// nobody (65534).
//
// libnfs 4.0 sends owner handles (nlm4_oh) and caller names as C strings: a handle
// or name holding a NUL byte would reach the origin cut short, as another owner, so
// such a call is not sent (Unreachable, with the reason). OwnerMap's origin owners
// ("nfsgw/<instance>/<id>") never hold one. Likewise a handle's length in a reply
// is its C string's. Replies are checked before they are used: a status outside
// nlm4_stats, or a cookie or holder handle past the protocol's 1024 bytes, ends the
// call NoAnswer ("malformed reply"), never a crash.
//
// An empty caller_name in a call's lock is filled in with `caller_name` (nfsgw's
// name at the origin, the one its statd monitors).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "gateway/nlm/origin_locks.h"

namespace nfsgw::upstream {

class OriginRpcChannel;

class OriginNlm final : public nlm::OriginLocks {
 public:
  static constexpr std::uint32_t kNsmProgram = 100024;
  static constexpr std::uint32_t kNsmVersion = 1;

  /// `host`: the origin's address or name; `nlm_port`, `statd_port`: 0 asks the
  /// origin's rpcbind; `call_timeout`: the bound on every call; `caller_name`:
  /// nfsgw's NLM caller name at the origin. Connects on the first call.
  OriginNlm(boost::asio::io_context& io, std::string host, std::uint16_t nlm_port,
            std::uint16_t statd_port, std::chrono::milliseconds call_timeout,
            std::string caller_name);
  /// Stops (see stop()).
  ~OriginNlm() override;
  OriginNlm(const OriginNlm&) = delete;
  OriginNlm& operator=(const OriginNlm&) = delete;

  /// Ends every call in progress (NoAnswer when sent, Unreachable otherwise) and
  /// every later one (Unreachable). From any thread.
  void stop();

  Awaitable<nlm::OriginReply<nlm4::TestRes>> test(const Credentials& cred, nlm4::TestArgs args) override;
  Awaitable<nlm::OriginReply<nlm4::Res>> lock(const Credentials& cred, nlm4::LockArgs args) override;
  Awaitable<nlm::OriginReply<nlm4::Res>> cancel(const Credentials& cred, nlm4::CancelArgs args) override;
  Awaitable<nlm::OriginReply<nlm4::Res>> unlock(const Credentials& cred, nlm4::UnlockArgs args) override;
  Awaitable<bool> notify_restart(std::string mon_name, std::int32_t state) override;
  /// SHARE and UNSHARE: libnfs 4.0's NLM client has neither, so each is a raw call
  /// (raw_rpc_call.h: protocol/'s codecs, a TCP connection of its own, to the NLM
  /// port given or the one the origin's rpcbind gives for NLM v4 over TCP), with
  /// the caller's AUTH_SYS credentials, within the call bound. A SHARE is rare (a
  /// DOS-style open), so a connection per call costs little. A reply that does not
  /// decode ends the call NoAnswer. (origin_nlm_share.cpp)
  Awaitable<nlm::OriginReply<nlm4::ShareRes>> share(const Credentials& cred, nlm4::ShareArgs args) override;
  Awaitable<nlm::OriginReply<nlm4::ShareRes>> unshare(const Credentials& cred, nlm4::ShareArgs args) override;

  /// NLM NULL: reply set (true) when the origin's NLM answered.
  Awaitable<nlm::OriginReply<bool>> ping(const Credentials& cred);
  /// SM_NOTIFY with its outcome and error (notify_restart's answer is only
  /// outcome == Answered).
  Awaitable<nlm::OriginReply<bool>> notify(std::string mon_name, std::int32_t state);

  const std::string& caller_name() const { return caller_name_; }

 private:
  Credentials with_machine(const Credentials& cred) const;
  Awaitable<nlm::OriginReply<nlm4::ShareRes>> share_call(nlm4::Proc proc, Credentials cred, nlm4::ShareArgs args);

  boost::asio::io_context& io_;
  std::string host_;
  std::uint16_t nlm_port_;
  std::chrono::milliseconds call_timeout_;
  std::atomic<bool> stopped_{false};
  std::string caller_name_;
  std::shared_ptr<OriginRpcChannel> nlm_;
  std::shared_ptr<OriginRpcChannel> statd_;
};

}  // namespace nfsgw::upstream
