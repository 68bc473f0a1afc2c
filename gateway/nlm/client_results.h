// The answers to a client's asynchronous NLM requests (issue 21): a TEST_MSG,
// LOCK_MSG, CANCEL_MSG, UNLOCK_MSG or GRANTED_MSG is answered by a call back to
// the client's own lock manager, TEST_RES, LOCK_RES, CANCEL_RES, UNLOCK_RES or
// GRANTED_RES, whose argument is the result the synchronous procedure would have
// returned (gateway/rpc/nlm_procedures.h). gateway/upstream's ClientNlm sends
// them in the server; tests record them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gateway/awaitable.h"
#include "protocol/nlm4_types.h"

namespace nfsgw::nlm {

class ClientResults {
 public:
  virtual ~ClientResults() = default;
  /// Sends `proc` (a _RES procedure) with `args` (its nlm4_res or nlm4_testres,
  /// encoded) to the lock manager of the client at `client_address`. Ends within
  /// the sender's bound; true when it was sent (a _RES call is one-way: no reply
  /// is awaited), false when it could not be (logged).
  virtual Awaitable<bool> send_result(std::string client_address, nlm4::Proc proc,
                                      std::vector<std::uint8_t> args) = 0;
};

}  // namespace nfsgw::nlm
