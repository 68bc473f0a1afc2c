// What the NLM integration tests ask of files on a server and on the origin's disk:
// a file's handle through a server's MOUNT and LOOKUP, and whether the origin's file
// system holds a write lock on a range (ganesha's VFS FSAL holds NLM locks as real
// locks on its files, so F_OFD_GETLK from this host sees them).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "tests/support/raw_nfs.h"

namespace integ {

/// The handle of `name` in the root of export `path` on a server (`nfs_port`,
/// `mount_port`); empty, with a test failure recorded, when the server refuses.
Handle handle_of(std::uint16_t nfs_port, std::uint16_t mount_port, const std::string& path, const std::string& name);

/// Whether a process of this host sees a write lock on [start, start + len) of
/// `path` (len 0: to the end of the file).
bool locked_at_origin(const std::string& path, off_t start = 0, off_t len = 0);

}  // namespace integ
