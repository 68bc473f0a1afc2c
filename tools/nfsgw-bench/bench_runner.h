#pragma once
// The whole bench run: connect (bounded), MNT, optional setup, resolve the
// working set, run the mode over the connections and threads, report.
#include <iosfwd>

#include "tools/nfsgw-bench/bench_options.h"

namespace nfsgw::bench {

/// Returns the process exit code: 0 success, 1 run failed (unreachable
/// server, timeouts, setup or walk incomplete), 2 bad URL.
int run_bench(const Options& o, std::ostream& out, std::ostream& err);

}  // namespace nfsgw::bench
