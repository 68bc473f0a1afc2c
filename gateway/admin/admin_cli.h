// The admin subcommands of the nfsgw binary:
//
//   nfsgw stats --config FILE [--json]
//   nfsgw invalidate --config FILE EXPORT[/PATH] [--recursive]
//
// Both read FILE for `[cache] dir` (the socket is <dir>/admin.sock) and, for
// invalidate, the export paths. Exit codes: 0 ok, 1 error (from nfsgw, a bad
// configuration, an unknown export), 2 nfsgw unreachable or a usage error.
#pragma once

#include <iosfwd>
#include <string_view>

namespace nfsgw::admin {

/// True for "stats" and "invalidate".
bool is_admin_subcommand(std::string_view arg);

/// The usage lines of the subcommands, for nfsgw's usage text.
const char* admin_usage();

/// Runs `argv[1]` (an admin subcommand) with the arguments after it.
int admin_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace nfsgw::admin
