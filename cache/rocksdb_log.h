// RocksDB's own log (the LOG file in the database directory), written so that a
// full or read-only cache disk cannot bring nfsgw down: RocksDB's file logger
// asserts (aborting the process, in Debian's build) when it appends again after a
// failed write, which is exactly what happens once the disk is full. This logger
// writes each line with one write(2) and drops the lines the disk refuses.
#pragma once

#include <memory>
#include <string>

namespace rocksdb {
class Logger;
}

namespace nfsgw::cache {

/// A logger appending to `path` (created; the previous one kept as `path`.old).
/// When the file passes `max_bytes` it starts again (the full one kept as .old).
std::shared_ptr<rocksdb::Logger> make_tolerant_rocksdb_logger(const std::string& path,
                                                               std::size_t max_bytes = 8u << 20);

}  // namespace nfsgw::cache
