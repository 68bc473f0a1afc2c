// `nfsgw flush --config FILE [EXPORT[/PATH]]`: asks the running nfsgw to commit
// at the origin what its write-back exports hold dirty (below the path, or
// everywhere), waits until it has, showing what is left on stderr (a line redrawn
// about once a second on a terminal, a line every few seconds elsewhere), then
// prints one line on stdout. Exit: 0 everything committed, 1 the flush failed (or
// a bad configuration or target), 2 a usage error or nfsgw unreachable.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "gateway/admin/flush_wire.h"
#include "gateway/cli/warm_cli.h"

namespace nfsgw::admin {

const char* flush_usage();

/// What is left and what went, for the terminal and the log (no '\n'):
/// "flush: 3 files, 12.0 MiB left; 40.0 MiB flushed (8.0 MiB/s), 0:05 elapsed".
std::string flush_progress_line(const FlushFigures& f, double elapsed_s);
/// The last line, '\n' included: "flushed /export/a: 40.0 MiB in 5.2 s; <message>".
std::string flush_done_line(const std::string& target, const FlushSummary& s, const std::string& message);

/// `args`: the arguments after "flush". `term` as for `nfsgw warm`.
int flush_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
               const warm::WarmTerminal& term,
               const std::function<std::chrono::steady_clock::time_point()>& now = [] {
                 return std::chrono::steady_clock::now();
               });

}  // namespace nfsgw::admin
