// NLM calls to nfsgw's lock clients (issue 21, design.md "Byte-range locks"):
// NLM_GRANTED (item 6, the ClientCallbacks of the NLM service in the server) and
// the _RES calls that answer a client's _MSG requests (nlm::ClientResults, for
// gateway/rpc/nlm_procedures), both through call(): any NLM v4 procedure.
//
// When a blocked waiter is granted, nfsgw calls NLM4 GRANTED (procedure 5) on the
// client's own lock manager, as knfsd's lockd does, so that the client takes the
// lock at once instead of on its next retry of the LOCK (Linux: every 30 s). The
// client's NLM is found through the client's rpcbind (program 100021 version 4,
// TCP, asked at <client>:111 by PMAP GETPORT) unless a port is given. The call
// goes over TCP, AUTH_NULL; its arguments are the waiter's own lock (the client's
// file handle, owner handle, svid and range), the caller name nfsgw's.
//
// What Linux's lockd does with it (fs/lockd, nlmclnt_grant): it looks for its
// blocked request with the same range, svid and file handle from the same server
// address (the call's source address must be the address the client sent its
// LOCK to: nfsgw sends from the address the host routes to the client by, which is
// that address unless the client reached nfsgw by another route), wakes it and
// answers nlm4_granted; nlm4_denied when it has no such request (it gave up, or
// its retry was granted already). GRANTED needs no credentials there (lockd's
// authenticate step lets callbacks through).
//
// Every call ends within `timeout`, rpcbind's answer and the connection included:
// a client that is gone, has no NLM registered or is silent gives false.
// Not using libnfs: its NLM client has no GRANTED and no _RES calls; the calls
// are raw_rpc_call's (one TCP connection per call).
//
// The _RES calls go over TCP, to the port the client's rpcbind gives for NLM v4
// over TCP, like GRANTED: nfsgw serves NLM on TCP only, so a client whose _MSG
// reached it speaks NLM over TCP, and a lock manager sends its callbacks over the
// transport the client called on (Linux's lockd and nfs-ganesha do the same). A
// client that registers its NLM for UDP only gets no _RES (logged): it sends its
// _MSG again, and then gives up as it would with a server that never answers.
// A _RES call is one-way: sent, not waited for (FreeBSD's lockd never answers
// one). At most `max_results` are in flight; past that a _RES is not sent
// (logged): the client's own retry asks again.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "gateway/nlm/client_results.h"
#include "gateway/nlm/nlm_service.h"
#include "gateway/upstream/raw_rpc_call.h"

namespace nfsgw::upstream {

class ClientNlm final : public nlm::ClientCallbacks, public nlm::ClientResults {
 public:
  struct Options {
    /// 0: each client's NLM v4 TCP port from its rpcbind; else this port (tests).
    std::uint16_t port = 0;
    /// The bound on each call, from the rpcbind question to the answer.
    std::chrono::milliseconds timeout{2000};
    /// _RES calls in flight at most (each lasts at most `timeout`).
    std::size_t max_results = 256;
  };

  ClientNlm(boost::asio::io_context& io, Options options);

  /// NLM v4 procedure `proc` with `args` (encoded) at the client's NLM, AUTH_NULL.
  /// `want_reply` false: one-way (Answered once sent).
  Awaitable<RawReply> call(std::string client_address, nlm4::Proc proc, std::vector<std::uint8_t> args,
                           bool want_reply = true);
  /// True when the client answered NLM4_GRANTED.
  Awaitable<bool> granted(std::string client_address, nlm4::TestArgs args) override;
  /// A _RES call, one-way; true when sent.
  Awaitable<bool> send_result(std::string client_address, nlm4::Proc proc, std::vector<std::uint8_t> args) override;
  /// Later calls give false at once.
  void stop() { stopped_ = true; }

 private:
  boost::asio::io_context& io_;
  Options options_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::size_t> results_in_flight_{0};
};

}  // namespace nfsgw::upstream
