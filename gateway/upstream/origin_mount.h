// The origin export's root file handle, obtained with MOUNT v3 MNT.
//
// The MNT is retried until the origin answers it: an origin that is down, or that
// answers with an error (e.g. the path is not exported yet), is logged and asked
// again with backoff (100 ms doubling to 2 s). Once the handle is known the MOUNT
// connection is closed; NFS handles outlive it.
#pragma once

#include <utility>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/config.h"
#include "gateway/nfs3_program.h"
#include "gateway/upstream/upstream_pool.h"

namespace nfsgw::upstream {

class OriginMount : public std::enable_shared_from_this<OriginMount> {
 public:
  OriginMount(boost::asio::io_context& io, const config::OriginUrl& origin,
              UpstreamOptions options = {});
  ~OriginMount();

  void start();
  /// Stops asking; pending root_handle() waiters get an empty handle.
  void stop();
  /// Waits until the root handle is known (empty only if stop() was called).
  Awaitable<nfs3::FileHandle> root_handle();
  std::optional<nfs3::FileHandle> known_root() const;

  // Called by the MNT call (on the MOUNT connection's strand).
  void mounted(const nfs3::FileHandle& fh);
  void mount_failed(const std::string& reason);

  /// Type-erased root_handle() waiter.
  class Waiter {
   public:
    virtual ~Waiter() = default;
    virtual void complete(const nfs3::FileHandle& fh) = 0;
  };

 private:
  void send_mnt();
  void add_waiter(std::unique_ptr<Waiter> w);

  boost::asio::io_context& io_;
  std::string host_;
  std::string path_;
  std::shared_ptr<UpstreamPool> pool_;
  boost::asio::steady_timer retry_timer_;

  mutable std::mutex mu_;
  std::optional<nfs3::FileHandle> root_;
  std::vector<std::unique_ptr<Waiter>> waiters_;
  bool stopped_ = false;
  unsigned failures_ = 0;
  std::chrono::milliseconds backoff_{100};
};

}  // namespace nfsgw::upstream
