#include "gateway/upstream/origin_mount.h"

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>

#include <algorithm>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace nfsgw::upstream {

namespace asio = boost::asio;

namespace {
constexpr std::uint32_t kMountProgram = 100005;
constexpr std::uint32_t kMountVersion = 3;
constexpr std::chrono::milliseconds kMaxBackoff{2000};

/// One MOUNT v3 MNT of the origin's export path.
class MntCall final : public UpstreamCall {
 public:
  MntCall(std::weak_ptr<OriginMount> mount, std::string path)
      : mount_(std::move(mount)), path_(std::move(path)) {
    what = "MNT";
  }
  int queue(struct rpc_context* rpc, RpcCallback cb, void* private_data) override {
    return rpc_mount3_mnt_async(rpc, cb, path_.data(), private_data);
  }
  void on_reply(void* data) override {
    auto mount = mount_.lock();
    if (!mount) return;
    const auto* res = static_cast<const ::mountres3*>(data);
    if (res == nullptr) {
      mount->mount_failed("empty MNT reply");
      return;
    }
    if (res->fhs_status != MNT3_OK) {
      const char* text = mountstat3_to_str(res->fhs_status);
      mount->mount_failed("origin refused MNT " + path_ + ": " +
                          (text != nullptr ? text : "?") + " (" +
                          std::to_string(static_cast<unsigned>(res->fhs_status)) + ")");
      return;
    }
    const auto& fh = res->mountres3_u.mountinfo.fhandle;
    if (fh.fhandle3_len == 0 || fh.fhandle3_len > nfs3::kFhSize || fh.fhandle3_val == nullptr) {
      mount->mount_failed("origin returned an unusable root handle of " +
                          std::to_string(fh.fhandle3_len) + " bytes");
      return;
    }
    mount->mounted(nfs3::FileHandle(
        {reinterpret_cast<const std::uint8_t*>(fh.fhandle3_val), fh.fhandle3_len}));
  }
  void on_fail(nfs3::Status status) override {
    if (auto mount = mount_.lock()) {
      mount->mount_failed("MNT call failed (status " +
                          std::to_string(static_cast<unsigned>(status)) + ")");
    }
  }

 private:
  std::weak_ptr<OriginMount> mount_;
  std::string path_;
};
}  // namespace

OriginMount::OriginMount(asio::io_context& io, const config::OriginUrl& origin,
                         UpstreamOptions options)
    : io_(io),
      host_(origin.host),
      path_(origin.path),
      pool_(std::make_shared<UpstreamPool>(
          io, Endpoint{origin.host, origin.mount_port, kMountProgram, kMountVersion}, 1,
          options)),
      retry_timer_(io) {}

OriginMount::~OriginMount() { pool_->stop(); }

void OriginMount::start() {
  pool_->start();
  send_mnt();
}

void OriginMount::send_mnt() {
  {
    std::lock_guard lock(mu_);
    if (stopped_ || root_) return;
  }
  // The MNT is the gateway's own request, not a user's: it goes with the
  // process's default AUTH_SYS identity.
  pool_->submit(std::make_unique<MntCall>(weak_from_this(), path_));
}

void OriginMount::mounted(const nfs3::FileHandle& fh) {
  std::vector<std::unique_ptr<Waiter>> waiters;
  {
    std::lock_guard lock(mu_);
    if (root_) return;
    root_ = fh;
    waiters.swap(waiters_);
  }
  spdlog::info("upstream: origin {}:{} mounted (root handle of {} bytes)", host_, path_, fh.len);
  pool_->stop();  // the MOUNT connection is not needed any more
  for (auto& w : waiters) w->complete(fh);
}

void OriginMount::mount_failed(const std::string& reason) {
  std::lock_guard lock(mu_);
  if (stopped_ || root_) return;
  ++failures_;
  if (failures_ == 1 || failures_ % 15 == 0) {
    spdlog::error("upstream: cannot get the root handle of {}:{}: {} (attempt {}, retrying)",
                  host_, path_, reason, failures_);
  } else {
    spdlog::debug("upstream: MNT {}:{} attempt {} failed: {}", host_, path_, failures_, reason);
  }
  retry_timer_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  retry_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->send_mnt();
  });
}

void OriginMount::stop() {
  std::vector<std::unique_ptr<Waiter>> waiters;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    retry_timer_.cancel();
    waiters.swap(waiters_);
  }
  pool_->stop();
  for (auto& w : waiters) w->complete(nfs3::FileHandle{});
}

std::optional<nfs3::FileHandle> OriginMount::known_root() const {
  std::lock_guard lock(mu_);
  return root_;
}

void OriginMount::add_waiter(std::unique_ptr<Waiter> w) {
  std::optional<nfs3::FileHandle> now;
  {
    std::lock_guard lock(mu_);
    if (root_) {
      now = root_;
    } else if (stopped_) {
      now = nfs3::FileHandle{};
    } else {
      waiters_.push_back(std::move(w));
      return;
    }
  }
  w->complete(*now);
}

Awaitable<nfs3::FileHandle> OriginMount::root_handle() {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(nfs3::FileHandle)>(
      [self = shared_from_this()](auto handler) {
        using Handler = decltype(handler);
        struct HandlerWaiter final : Waiter {
          explicit HandlerWaiter(Handler&& h) : handler(std::move(h)) {}
          void complete(const nfs3::FileHandle& fh) override {
            auto ex = asio::get_associated_executor(handler);
            asio::post(ex, [h = std::move(handler), fh]() mutable { std::move(h)(fh); });
          }
          Handler handler;
        };
        self->add_waiter(std::make_unique<HandlerWaiter>(std::move(handler)));
      },
      asio::use_awaitable);
}

}  // namespace nfsgw::upstream
