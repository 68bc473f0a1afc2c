// Runs one parsed admin request against the gateway and writes the whole reply:
// body lines, then the `ok` / `error <message>` status line (admin_protocol.h).
// May block on the disk: AdminServer calls it on its worker thread only.
#pragma once

#include <string>

#include "gateway/admin/admin_commands.h"
#include "gateway/admin/admin_protocol.h"

namespace nfsgw::admin {

/// Never throws: exceptions from `commands` become the `error` status line
/// (std::invalid_argument as they are, others as internal errors).
std::string execute_request(const Request& request, AdminCommands& commands);

}  // namespace nfsgw::admin
