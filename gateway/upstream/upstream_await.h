// Bridges a pool call into a coroutine: `co_await await_call<Res>(pool, ...)`.
//
// The call completes on the connection's strand (inside libnfs's callback); the
// answer is then posted to the awaiting coroutine's own executor, so coroutines
// never run on, or hold up, a libnfs strand.
#pragma once

#include <utility>

#include <atomic>
#include <cstddef>
#include <memory>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "gateway/made_up.h"
#include "gateway/nfs3_program.h"
#include "gateway/upstream/upstream_pool.h"

namespace nfsgw::upstream {

/// What the pool needs to know about a call besides how to send it.
struct CallSpec {
  bool idempotent = true;
  const char* what = "?";
  const Credentials* cred = nullptr;  // null: the gateway's own identity
  /// CallContext::caller_gone of the caller; null: never abandoned. The call takes
  /// a share of it, since it may stay inside libnfs after its caller has gone.
  const CallerGone* caller_gone = nullptr;
  /// Bytes the call sends beyond its small arguments (a WRITE's data).
  std::size_t payload = 0;
};

/// A share of `gone`'s flag for a call that may outlive its caller; null when
/// `gone` is null (or, against its contract, not owned by a shared_ptr: then the
/// call is simply never abandoned).
inline std::shared_ptr<const std::atomic<bool>> share_flag(const CallerGone* gone) {
  if (gone == nullptr) return nullptr;
  std::shared_ptr<const CallerGone> owner = gone->weak_from_this().lock();
  if (!owner) return nullptr;
  return std::shared_ptr<const std::atomic<bool>>(std::move(owner), &gone->raised);
}

/// An UpstreamCall that resumes a coroutine. `Queue` is
/// int(rpc_context*, RpcCallback, void*); `Reply` is void(void* libnfs_result, Res&).
template <typename Res, typename Handler, typename Queue, typename Reply>
class AwaitedCall final : public UpstreamCall {
 public:
  AwaitedCall(Handler handler, Queue queue, Reply reply)
      : handler_(std::move(handler)), queue_(std::move(queue)), reply_(std::move(reply)) {}

  int queue(struct rpc_context* rpc, RpcCallback cb, void* private_data) override {
    return queue_(rpc, cb, private_data);
  }
  void on_reply(void* data) override {
    Res res{};
    reply_(data, res);
    finish(std::move(res));
  }
  /// The status is nfsgw's own (JUKEBOX, SERVERFAULT, ACCES; see
  /// UpstreamCall::on_fail), not the origin's: the result says so.
  void on_fail(nfs3::Status status) override {
    finish(made_up<Res>(status));
  }

 private:
  void finish(Res res) {
    auto ex = boost::asio::get_associated_executor(handler_);
    boost::asio::post(ex, [h = std::move(handler_), r = std::move(res)]() mutable {
      std::move(h)(std::move(r));
    });
  }

  Handler handler_;
  Queue queue_;
  Reply reply_;
};

template <typename Res, typename Queue, typename Reply>
Awaitable<Res> await_call(UpstreamPool& pool, CallSpec spec, Queue queue, Reply reply) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(Res)>(
      [&pool, spec](auto handler, Queue q, Reply r) {
        auto call = std::make_unique<AwaitedCall<Res, decltype(handler), Queue, Reply>>(
            std::move(handler), std::move(q), std::move(r));
        call->idempotent = spec.idempotent;
        call->what = spec.what;
        if (spec.cred != nullptr) call->cred = *spec.cred;
        call->caller_gone = share_flag(spec.caller_gone);
        call->payload = spec.payload;
        pool.submit(std::move(call));
      },
      boost::asio::use_awaitable, std::move(queue), std::move(reply));
}

}  // namespace nfsgw::upstream
