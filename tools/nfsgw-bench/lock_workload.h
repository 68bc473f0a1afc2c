#pragma once
// The locks mode: each unit is an NLM v4 LOCK (exclusive, non-blocking) of one
// byte of a file of the working set, then, once GRANTED, its UNLOCK. Every unit
// is an owner of its own (owner handle "nb-<thread>-<n>", svid n) on a byte of its
// own (offset n), so no two units conflict and the server's owner table sees
// owners come and go as under many short-lived lockers. A LOCK not GRANTED ends
// the unit (its status is counted as an error).
#include <atomic>
#include <cstdint>
#include <memory>

#include "tools/nfsgw-bench/bench_options.h"
#include "tools/nfsgw-bench/load_workloads.h"
#include "tools/nfsgw-bench/workload.h"

namespace nfsgw::bench {

std::unique_ptr<Workload> make_lock_workload(const Options& o, const RunData& data, unsigned thread,
                                             unsigned threads);

}  // namespace nfsgw::bench
