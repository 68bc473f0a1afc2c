#include "tools/wan-emu/probe/nfs_probe.h"

#include <poll.h>

#include <algorithm>
#include <cstring>

extern "C" {
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
}

namespace nfsgw::wanemu::probe {

using Clock = std::chrono::steady_clock;

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto idx = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

namespace {

/// Drives one context until `done()` or the deadline; false when the context failed.
template <class Done>
bool drive(rpc_context* rpc, Clock::time_point deadline, Done done, std::string& error) {
  while (!done()) {
    auto now = Clock::now();
    if (now >= deadline) return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfd{};
    pfd.fd = rpc_get_fd(rpc);
    pfd.events = static_cast<short>(rpc_which_events(rpc));
    int r = poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 100)));
    if (r < 0 && errno != EINTR) {
      error = std::string("poll: ") + std::strerror(errno);
      return false;
    }
    if (rpc_service(rpc, r > 0 ? pfd.revents : 0) < 0) {
      const char* e = rpc_get_error(rpc);
      error = e ? e : "rpc_service failed";
      return false;
    }
  }
  return true;
}

}  // namespace

struct NfsProbe::Impl {
  rpc_context* nfs = nullptr;
  std::vector<char> root_fh;
  // Batch state, touched by callbacks.
  BatchResult* batch = nullptr;
  std::uint64_t outstanding = 0;
  bool tearing_down = false;

  struct Call {
    Impl* impl;
    Clock::time_point start;
  };

  static void on_reply(rpc_context* rpc, int status, void* data, void* priv) {
    auto* call = static_cast<Call*>(priv);
    Impl* self = call->impl;
    if (!self->tearing_down && self->batch) {
      --self->outstanding;
      if (status == RPC_STATUS_SUCCESS) {
        ++self->batch->ok;
        self->batch->rtt_ms.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - call->start).count());
      } else {
        ++self->batch->failed;
        if (self->batch->error.empty())
          self->batch->error = status == RPC_STATUS_ERROR && data ? static_cast<const char*>(data) : "cancelled";
      }
    }
    delete call;
  }
};

NfsProbe::NfsProbe() : impl_(std::make_unique<Impl>()) {}

NfsProbe::~NfsProbe() {
  impl_->tearing_down = true;
  if (impl_->nfs) rpc_destroy_context(impl_->nfs);
}

bool NfsProbe::mount(const std::string& host, int mount_port, const std::string& export_path,
                     std::chrono::milliseconds timeout) {
  struct State {
    bool connected = false, done = false, ok = false;
    std::string error;
    std::vector<char> fh;
  } st;
  rpc_context* rpc = rpc_init_context();
  if (!rpc) {
    error_ = "rpc_init_context failed";
    return false;
  }
  auto deadline = Clock::now() + timeout;
  auto on_connect = [](rpc_context*, int status, void* data, void* priv) {
    auto* s = static_cast<State*>(priv);
    s->connected = status == RPC_STATUS_SUCCESS;
    if (!s->connected) {
      s->done = true;
      s->error = data ? static_cast<const char*>(data) : "connect failed";
    }
  };
  auto on_mnt = [](rpc_context*, int status, void* data, void* priv) {
    auto* s = static_cast<State*>(priv);
    s->done = true;
    if (status != RPC_STATUS_SUCCESS) {
      s->error = data ? static_cast<const char*>(data) : "MNT failed";
      return;
    }
    auto* res = static_cast<mountres3*>(data);
    if (res->fhs_status != MNT3_OK) {
      s->error = "MNT status " + std::to_string(res->fhs_status);
      return;
    }
    const fhandle3& fh = res->mountres3_u.mountinfo.fhandle;
    s->fh.assign(fh.fhandle3_val, fh.fhandle3_val + fh.fhandle3_len);  // libnfs frees it after we return
    s->ok = true;
  };
  std::string err;
  bool alive = rpc_connect_async(rpc, host.c_str(), mount_port, on_connect, &st) == 0 &&
               drive(rpc, deadline, [&] { return st.connected || st.done; }, err);
  if (alive && st.connected) {
    std::string path = export_path;
    alive = rpc_mount3_mnt_async(rpc, on_mnt, path.data(), &st) == 0 &&
            drive(rpc, deadline, [&] { return st.done; }, err);
  }
  rpc_destroy_context(rpc);
  if (!st.ok) {
    error_ = !st.error.empty() ? st.error : (!err.empty() ? err : "mount timed out");
    return false;
  }
  impl_->root_fh = std::move(st.fh);
  return true;
}

bool NfsProbe::connect(const std::string& host, int nfs_port, std::chrono::milliseconds timeout) {
  if (impl_->nfs) {
    impl_->tearing_down = true;
    rpc_destroy_context(impl_->nfs);
    impl_->tearing_down = false;
  }
  impl_->nfs = rpc_init_context();
  if (!impl_->nfs) {
    error_ = "rpc_init_context failed";
    return false;
  }
  struct State {
    bool done = false, ok = false;
    std::string error;
  } st;
  auto on_connect = [](rpc_context*, int status, void* data, void* priv) {
    auto* s = static_cast<State*>(priv);
    s->done = true;
    s->ok = status == RPC_STATUS_SUCCESS;
    if (!s->ok) s->error = data ? static_cast<const char*>(data) : "connect failed";
  };
  std::string err;
  if (rpc_connect_async(impl_->nfs, host.c_str(), nfs_port, on_connect, &st) != 0) {
    error_ = rpc_get_error(impl_->nfs);
    return false;
  }
  drive(impl_->nfs, Clock::now() + timeout, [&] { return st.done; }, err);
  if (!st.ok) error_ = !st.error.empty() ? st.error : (!err.empty() ? err : "connect timed out");
  return st.ok;
}

BatchResult NfsProbe::run(Proc proc, std::uint64_t total, std::uint64_t in_flight,
                          std::chrono::milliseconds timeout) {
  BatchResult res;
  if (!impl_->nfs) {
    res.error = "not connected";
    return res;
  }
  if (proc == Proc::Getattr && impl_->root_fh.empty()) {
    res.error = "GETATTR needs mount() first";
    return res;
  }
  impl_->batch = &res;
  impl_->outstanding = 0;
  std::uint64_t issued = 0;
  auto start = Clock::now();
  auto deadline = start + timeout;
  GETATTR3args args{};
  args.object.data.data_len = static_cast<u_int>(impl_->root_fh.size());
  args.object.data.data_val = impl_->root_fh.data();
  bool alive = true;
  while (alive && (issued < total || impl_->outstanding > 0) && Clock::now() < deadline) {
    while (issued < total && impl_->outstanding < in_flight) {
      auto* call = new Impl::Call{impl_.get(), Clock::now()};
      int rc = proc == Proc::Null ? rpc_nfs3_null_async(impl_->nfs, Impl::on_reply, call)
                                  : rpc_nfs3_getattr_async(impl_->nfs, Impl::on_reply, &args, call);
      if (rc != 0) {
        delete call;
        ++res.failed;
        if (res.error.empty()) res.error = rpc_get_error(impl_->nfs);
        alive = false;
        break;
      }
      ++issued;
      ++impl_->outstanding;
    }
    if (!alive) break;
    std::string err;
    // Service until at least one call completes, so new calls are issued promptly.
    std::uint64_t before = res.ok + res.failed;
    alive = drive(impl_->nfs, deadline, [&] { return res.ok + res.failed != before || impl_->outstanding == 0; }, err);
    if (!alive && res.error.empty()) res.error = err;
  }
  res.unfinished = impl_->outstanding;
  res.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  impl_->batch = nullptr;
  if (!alive || res.unfinished > 0) {
    // The context is in an unknown state; callbacks of the abandoned calls must not
    // touch `res` (it is returned by value), so drop the connection now.
    impl_->tearing_down = true;
    rpc_destroy_context(impl_->nfs);
    impl_->nfs = nullptr;
    impl_->tearing_down = false;
  }
  return res;
}

}  // namespace nfsgw::wanemu::probe
