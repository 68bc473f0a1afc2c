// The NLM v4 dispatch table (program 100021 version 4) over an NlmService
// (gateway/nlm/nlm_service.h).
//
// Served: NULL, TEST, LOCK, CANCEL, UNLOCK, GRANTED, NM_LOCK (a LOCK that never
// blocks) and FREE_ALL. Arguments that do not decode are GARBAGE_ARGS. A call
// the service leaves unanswered (the origin's lock manager did not answer) gets
// no reply at all, so that the client sends it again.
//
// The asynchronous forms, with `results` (a client's lock manager reached by
// ClientNlm in the server):
//   - TEST_MSG, LOCK_MSG, CANCEL_MSG, UNLOCK_MSG run exactly what TEST, LOCK,
//     CANCEL and UNLOCK run (the same NlmService calls: handle check, grace,
//     owners, origin), and GRANTED_MSG what GRANTED does. The call gets a void
//     reply, and its result goes to the client's NLM as TEST_RES, LOCK_RES,
//     CANCEL_RES, UNLOCK_RES or GRANTED_RES, sent in the background (bounded by
//     ClientNlm; the dispatcher never waits for it). When the service leaves the
//     request unanswered, neither the reply nor a _RES is sent: the client sends
//     its _MSG again, as it would a synchronous call.
//   - TEST_RES, LOCK_RES, CANCEL_RES, UNLOCK_RES and GRANTED_RES sent to nfsgw are
//     decoded (GARBAGE_ARGS when they do not) and answered void. nfsgw sends no
//     _MSG of its own, so none answers anything nfsgw waits for: in particular a
//     GRANTED_RES cannot be the answer to nfsgw's NLM_GRANTED (ClientNlm calls the
//     synchronous GRANTED, whose reply carries the answer), and is only logged.
// Without `results` the _MSG forms are PROC_UNAVAIL (the _RES forms are served).
//
// SHARE and UNSHARE, with `shares` (gateway/nlm/share_service.h): DOS share
// reservations carried to the origin's NLM; one the origin leaves unanswered gets
// no reply, as a lock does. FREE_ALL releases the host's reservations as well as
// its locks. Without `shares`, SHARE and UNSHARE are PROC_UNAVAIL.
#pragma once

#include "gateway/nlm/client_results.h"
#include "gateway/nlm/nlm_service.h"
#include "gateway/nlm/share_service.h"
#include "gateway/rpc/procedure_table.h"

namespace nfsgw::rpc {

/// What the table reaches besides the lock service; nullptr: not served.
struct NlmPeers {
  nlm::ClientResults* results = nullptr;  // the _RES calls of the _MSG forms
  nlm::ShareService* shares = nullptr;     // SHARE, UNSHARE
};

ProgramVersion make_nlm4_table(nlm::NlmService& service, NlmPeers peers = {});

}  // namespace nfsgw::rpc
