// An NLM v4 client for integration tests, made of libnfs's raw NLM calls
// (gateway/upstream's OriginNlm) pointed at a server's NLM port: nfsgw's, or the
// origin's. Header-only, for the test binaries that link nfsgw_upstream.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <chrono>
#include <cstdint>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "gateway/call_context.h"
#include "gateway/upstream/origin_nlm.h"
#include "protocol/nlm4_types.h"
#include "tests/support/raw_nfs.h"

namespace integ {

/// Runs NLM client calls (OriginNlm coroutines) on two threads of their own.
class NlmLoop {
 public:
  NlmLoop() : work_(io_.get_executor()) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~NlmLoop() {
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  boost::asio::io_context& io() { return io_; }
  template <typename F>
  auto run(F make) {
    auto fut = boost::asio::co_spawn(io_, std::move(make), boost::asio::use_future);
    if (fut.wait_for(std::chrono::seconds(60)) != std::future_status::ready)
      throw std::runtime_error("NLM call not done in 60 s");
    return fut.get();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

/// The credentials of every call: uid and gid 1000.
inline nfsgw::Credentials nlm_user() {
  nfsgw::Credentials c;
  c.uid = 1000;
  c.gid = 1000;
  c.machine_name = "nlm-test";
  return c;
}

/// A lock owner of a client host.
struct NlmOwner {
  std::string host;  // its caller name
  std::string oh;
  std::int32_t svid = 0;
};

inline nfsgw::nlm4::Lock lock_of(const NlmOwner& o, const Handle& fh, std::uint64_t off, std::uint64_t len) {
  nfsgw::nlm4::Lock l;
  l.caller_name = o.host;
  l.fh = nfsgw::nfs3::FileHandle(fh);
  l.oh.assign(o.oh.begin(), o.oh.end());
  l.svid = o.svid;
  l.offset = off;
  l.length = len;
  return l;
}

/// An NLM client of one server at 127.0.0.1:`port`. Every call answers the
/// server's nlm4_stats, or 999 when the server did not answer.
class NlmClient {
 public:
  NlmClient(NlmLoop& loop, std::uint16_t port)
      : loop_(loop), nlm_(loop.io(), "127.0.0.1", port, 0, std::chrono::milliseconds(30000), "nlm-test") {}
  ~NlmClient() { nlm_.stop(); }

  /// `state`: the NSM state the lock is taken under (the client's, as its statd has it).
  std::uint32_t lock(const NlmOwner& o, const Handle& fh, std::uint64_t off, std::uint64_t len, bool block = false,
                     bool reclaim = false, std::int32_t state = 1) {
    nfsgw::nlm4::LockArgs a;
    a.cookie = {1, 2};
    a.block = block;
    a.reclaim = reclaim;
    a.exclusive = true;
    a.lock = lock_of(o, fh, off, len);
    a.state = state;
    return stat(loop_.run([this, a]() { return nlm_.lock(nlm_user(), a); }));
  }
  std::uint32_t unlock(const NlmOwner& o, const Handle& fh, std::uint64_t off, std::uint64_t len) {
    nfsgw::nlm4::UnlockArgs a;
    a.cookie = {3};
    a.lock = lock_of(o, fh, off, len);
    return stat(loop_.run([this, a]() { return nlm_.unlock(nlm_user(), a); }));
  }
  std::uint32_t test(const NlmOwner& o, const Handle& fh, std::uint64_t off, std::uint64_t len) {
    nfsgw::nlm4::TestArgs a;
    a.cookie = {4};
    a.exclusive = true;
    a.lock = lock_of(o, fh, off, len);
    return stat(loop_.run([this, a]() { return nlm_.test(nlm_user(), a); }));
  }

 private:
  template <typename R>
  static std::uint32_t stat(const nfsgw::nlm::OriginReply<R>& r) {
    if (r.outcome != nfsgw::nlm::Outcome::Answered || !r.reply) return 999;
    return static_cast<std::uint32_t>(r.reply->stat);
  }
  NlmLoop& loop_;
  nfsgw::upstream::OriginNlm nlm_;
};

}  // namespace integ
