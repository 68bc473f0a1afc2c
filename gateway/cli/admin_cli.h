// The admin subcommands of the nfsgw binary:
//
//   nfsgw stats --config FILE [--json]
//   nfsgw exports --config FILE
//   nfsgw invalidate --config FILE EXPORT[/PATH] [--recursive]
//   nfsgw reload --config FILE
//   nfsgw exports --config FILE
//   nfsgw warm --config FILE EXPORT[/PATH] [--depth N] [--data] [--parallel N] [--manifest FILE]
//   nfsgw flush --config FILE [EXPORT[/PATH]]
//
// All read FILE for `[cache] dir` (the socket is <dir>/admin.sock) and, for
// invalidate, warm and flush, the export paths (warm: gateway/cli/warm_cli.h;
// flush: gateway/cli/flush_cli.h). reload asks the running nfsgw to read FILE and
// apply it (docs/operations.md); a FILE that is not valid is refused here already,
// with the message nfsgw gives at start-up, and the running one is unchanged. Exit codes: 0 ok, 1 error (from nfsgw, a bad
// configuration, an unknown export), 2 nfsgw unreachable or a usage error.
#pragma once

#include <iosfwd>
#include <string_view>

namespace nfsgw::admin {

/// True for "stats", "invalidate", "reload", "exports", "warm" and "flush".
bool is_admin_subcommand(std::string_view arg);

/// The usage lines of the subcommands, for nfsgw's usage text.
const char* admin_usage();

/// Runs `argv[1]` (an admin subcommand) with the arguments after it.
int admin_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace nfsgw::admin
