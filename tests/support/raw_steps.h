// Steps over RawNfsConnection that must succeed, recording a test failure (and
// returning an empty value) when they do not: shared by the cache tests, which
// walk to files, read them whole and compare digests.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "tests/support/raw_nfs.h"

namespace integ {

/// A raw NFSv3 connection to 127.0.0.1:port acting as uid/gid (root unless told);
/// null (with a failure recorded) when it cannot connect.
std::unique_ptr<RawNfsConnection> connect_nfs(std::uint16_t port, std::uint32_t uid = 0, std::uint32_t gid = 0);

/// LOOKUP that must succeed: the handle, or empty.
Handle must_lookup(RawNfsConnection& c, const Handle& dir, const std::string& name);
/// LOOKUP of each component of "a/b/c" from `root`.
Handle must_walk(RawNfsConnection& c, Handle root, const std::string& rel_path);
/// GETATTR that must succeed (`what` names it in the failure).
RawFattr must_getattr(RawNfsConnection& c, const Handle& fh, const std::string& what);
/// Returns once the wall clock reads `later` past the mtime in `attrs`: a change
/// made on the same machine from then on gets a visibly later mtime.
void wait_past_mtime(const RawFattr& attrs, std::chrono::milliseconds later);

/// Reads `size` bytes of a file from offset 0 in READs of `chunk` bytes and returns
/// the hex SHA-256 of what came back; "" (with a failure recorded) when a READ
/// fails, comes back short before the end, or the last one does not say EOF.
std::string read_digest(RawNfsConnection& c, const Handle& fh, std::uint64_t size, std::uint32_t chunk = 1u << 20);

}  // namespace integ
