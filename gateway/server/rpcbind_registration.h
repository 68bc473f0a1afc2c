// Registration of NFS v3, MOUNT v1/v3 and (when served) NLM v4 with the local rpcbind, so that clients
// that mount without explicit ports find nfsgw. Unregisters on destruction.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace nfsgw {

class RpcbindRegistration {
 public:
  /// Registers (TCP) NFS v3 on `nfs_port`, MOUNT v1 and v3 on `mount_port` and,
  /// unless `nlm_port` is 0, NLM v4 on `nlm_port`. Failures are logged, not
  /// thrown: nfsgw still serves clients that give ports.
  RpcbindRegistration(std::uint16_t nfs_port, std::uint16_t mount_port, std::uint16_t nlm_port = 0);
  ~RpcbindRegistration();
  RpcbindRegistration(const RpcbindRegistration&) = delete;
  RpcbindRegistration& operator=(const RpcbindRegistration&) = delete;

 private:
  std::vector<std::pair<std::uint32_t, std::uint32_t>> done_;
};

}  // namespace nfsgw
