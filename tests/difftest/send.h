// A step's NFS call on a client: the same function sends it to nfsgw (with the
// gateway's handles) and to the origin (with the origin's), so that a question
// asked of both is the same question.
#pragma once

#include "tests/difftest/nfs3_client.h"
#include "tests/difftest/step.h"

namespace difftest {

/// Sends `s` (a question or a change) with `a` and, for RENAME and LINK, `b`.
Reply send(Nfs3Client& c, const Step& s, const Handle& a, const Handle& b);

}  // namespace difftest
