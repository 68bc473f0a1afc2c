// The client side of the admin socket, for `nfsgw stats` and `nfsgw invalidate`.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace nfsgw::admin {

/// Exit codes of the admin subcommands.
enum ExitCode : int { kExitOk = 0, kExitError = 1, kExitUnreachable = 2 };

/// Sends one request line (admin_protocol.h: format_request) to the gateway's
/// admin socket and prints the body lines of the reply to `out`. An `error` reply,
/// or a reply cut short, is printed to `err`. Returns kExitOk on `ok`, kExitError
/// on `error` (or a broken reply, or no reply within `timeout`), kExitUnreachable
/// when the socket cannot be reached ("nfsgw is not running? cannot connect to
/// PATH: No such file or directory").
int send_admin_request(const std::string& socket_path, const std::string& request_line,
                       std::ostream& out, std::ostream& err,
                       std::chrono::seconds timeout = std::chrono::seconds(300));

/// For replies that stream (`warm`): sends `request` (the request line and any
/// lines after it) and hands each body line to `on_line` as it arrives (without
/// '\n'). The status line is the line "ok" or one starting "error ": a streamed
/// body line never looks like one. Returns like send_admin_request; `timeout` is
/// how long a quiet connection is waited for.
int stream_admin_request(const std::string& socket_path, const std::string& request,
                         const std::function<void(std::string_view)>& on_line, std::ostream& err,
                         std::chrono::seconds timeout = std::chrono::seconds(300));

}  // namespace nfsgw::admin
