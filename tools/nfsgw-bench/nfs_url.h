#pragma once
// Parser for the libnfs-style URL the bench is pointed at:
//   nfs://HOST[:PORT]/EXPORT/PATH?nfsport=N&mountport=M
// Only the parts the bench uses are understood; unknown query keys are refused
// so a typo (nfsprot=) does not silently fall back to rpcbind.
#include <cstdint>
#include <string>

namespace nfsgw::bench {

struct NfsUrl {
  std::string host;
  std::string export_path;  ///< path given to MOUNT3 MNT, always starts with '/'
  std::uint16_t nfs_port = 0;    ///< 0: ask rpcbind
  std::uint16_t mount_port = 0;  ///< 0: ask rpcbind
};

/// Throws std::invalid_argument on anything malformed.
NfsUrl parse_nfs_url(const std::string& url);

}  // namespace nfsgw::bench
