// Per-export rules applied to every call: who may use the export, what credentials
// reach the origin (squash), and whether it may be changed.
#pragma once

#include "config/config.h"
#include "gateway/call_context.h"
#include "protocol/nfs3_types.h"

namespace nfsgw {

/// The credentials to send upstream for `cred` under the export's squash rule.
/// AUTH_NONE callers always become the anonymous user.
Credentials squash(const Credentials& cred, const config::ExportConfig& e);

/// Ok, or the status that refuses this call: ACCES for a client outside `clients`,
/// ROFS for a change to a read-only export.
nfs3::Status admit(const CallContext& ctx, const config::ExportConfig& e);

}  // namespace nfsgw
