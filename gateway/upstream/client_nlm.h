// NLM_GRANTED to nfsgw's lock clients (issue 21, design.md "Byte-range locks",
// item 6): the ClientCallbacks of the NLM service in the server.
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
// Not using libnfs: its NLM client has no GRANTED.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include <boost/asio/io_context.hpp>

#include "gateway/nlm/nlm_service.h"

namespace nfsgw::upstream {

class ClientNlm final : public nlm::ClientCallbacks {
 public:
  struct Options {
    /// 0: each client's NLM v4 TCP port from its rpcbind; else this port (tests).
    std::uint16_t port = 0;
    /// The bound on each call, from the rpcbind question to the answer.
    std::chrono::milliseconds timeout{2000};
  };

  ClientNlm(boost::asio::io_context& io, Options options);

  /// True when the client answered NLM4_GRANTED.
  Awaitable<bool> granted(std::string client_address, nlm4::TestArgs args) override;
  /// Later calls give false at once.
  void stop() { stopped_ = true; }

 private:
  boost::asio::io_context& io_;
  Options options_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint32_t> xid_;
};

}  // namespace nfsgw::upstream
