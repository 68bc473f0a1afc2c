// One ONC RPC call over a TCP connection of its own, encoded with protocol/'s
// codecs: for the NLM calls libnfs 4.0 has no client for (NLM_GRANTED and the
// _RES calls to a client's lock manager, ClientNlm; AUTH_SYS and names that need
// resolving are there for the origin's NLM SHARE, which libnfs lacks too).
//
// The program's TCP port is asked from the host's rpcbind (PMAP GETPORT at
// <host>:111) unless given. The credential is AUTH_NULL, or AUTH_SYS with the
// caller's identity. Every call ends within `timeout`, the name's resolution,
// rpcbind's answer and the connection included, with one of OriginLocks'
// outcomes:
//   - Answered: accepted with SUCCESS; `result` holds the procedure's result bytes
//     (empty for a one-way call, below);
//   - Unreachable: never sent (no address, rpcbind has no port for it, the
//     connection was refused or not made in time) or refused at the RPC level
//     (PROG_UNAVAIL, PROC_UNAVAIL, GARBAGE_ARGS, an AUTH error): it never ran;
//   - NoAnswer: sent, and no usable reply by the deadline (silent peer, dropped
//     connection, a reply that does not decode): the peer may or may not have acted.
//
// A one-way call (`want_reply` false) is Answered once its record is written: the
// _RES calls are one-way in practice (FreeBSD's lockd never replies to them, Linux's
// replies void), and waiting for a reply that may never come would hold the
// connection for the whole bound. The connection is then closed; the record is
// delivered first (a close after a completed write sends it before the FIN).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "gateway/nlm/origin_locks.h"

namespace nfsgw::upstream {

struct RawCall {
  std::string host;        // an address, or a name resolved first
  std::uint16_t port = 0;  // 0: ask the host's rpcbind for (prog, vers) over TCP
  std::uint32_t prog = 0, vers = 0, proc = 0;
  /// nullopt: AUTH_NULL; else AUTH_SYS with these ids (machine name cut to 255 bytes,
  /// "nfsgw" when empty; at most 16 groups).
  std::optional<Credentials> cred;
  std::vector<std::uint8_t> args;  // the procedure's arguments, encoded
  std::chrono::milliseconds timeout{2000};
  bool want_reply = true;
};

struct RawReply {
  nlm::Outcome outcome = nlm::Outcome::Unreachable;
  std::vector<std::uint8_t> result;  // Answered: the procedure's result
  std::string error;                 // otherwise: why
};

/// Runs `call` on a strand of its own on `io`; never throws.
Awaitable<RawReply> raw_rpc_call(boost::asio::io_context& io, RawCall call);

}  // namespace nfsgw::upstream
