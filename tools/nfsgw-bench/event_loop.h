#pragma once
// poll() over several libnfs connections in one thread, until a condition or a
// deadline. One loop per thread is the whole threading model: libnfs contexts
// are never shared between threads.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tools/nfsgw-bench/nfs_connection.h"

namespace nfsgw::bench {

using Clock = std::chrono::steady_clock;

enum class LoopResult { Done, Deadline, ConnectionFailed };

/// Services conns until done() is true (checked before each poll), the
/// deadline passes, or a connection fails (its error() says why).
LoopResult poll_until(const std::vector<Connection*>& conns, const std::function<bool()>& done,
                      Clock::time_point deadline);

/// One poll() round of at most max_wait; returns false if a connection failed.
bool poll_once(const std::vector<Connection*>& conns, std::chrono::milliseconds max_wait);

/// First failed connection's error, or empty.
std::string first_connection_error(const std::vector<Connection*>& conns);

}  // namespace nfsgw::bench
