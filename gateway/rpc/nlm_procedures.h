// The NLM v4 dispatch table (program 100021 version 4) over an NlmService
// (gateway/nlm/nlm_service.h).
//
// Served: NULL, TEST, LOCK, CANCEL, UNLOCK, GRANTED, NM_LOCK (a LOCK that never
// blocks) and FREE_ALL. Arguments that do not decode are GARBAGE_ARGS. A call
// the service leaves unanswered (the origin's lock manager did not answer) gets
// no reply at all, so that the client sends it again. Not served yet
// (PROC_UNAVAIL): the asynchronous _MSG and _RES forms (the Linux client uses the
// synchronous ones), SHARE and UNSHARE.
#pragma once

#include "gateway/nlm/nlm_service.h"
#include "gateway/rpc/procedure_table.h"

namespace nfsgw::rpc {

ProgramVersion make_nlm4_table(nlm::NlmService& service);

}  // namespace nfsgw::rpc
