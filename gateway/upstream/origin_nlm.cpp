// libnfs's raw NLM and NSM headers are included only here (they cannot share a
// translation unit with libtirpc's rpc/rpc.h).
#include "gateway/upstream/origin_nlm.h"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nfsc/libnfs-zdr.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nlm.h>
#include <nfsc/libnfs-raw-nsm.h>

#include "gateway/upstream/origin_rpc_channel.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;
using nlm::Outcome;
using nlm::OriginReply;

namespace origin_nlm_cpp {

constexpr std::uint32_t kNobody = 65534;
constexpr std::size_t kMaxNsmName = 1024;  // SM_MAXSTRLEN

// ---- nfsgw -> libnfs ----------------------------------------------------------------

char* mut(const void* p) { return const_cast<char*>(static_cast<const char*>(p)); }

/// The C strings a libnfs nlm4_lock points into, alive while the call is queued
/// (libnfs encodes the arguments then and keeps no pointer to them).
struct LockStrings {
  std::string caller_name;
  std::string oh;
};

nlm_cookie to_cookie(const nlm4::Netobj& n) {
  nlm_cookie c{};
  c.data.data_len = static_cast<u_int>(n.size());
  c.data.data_val = n.empty() ? nullptr : mut(n.data());
  return c;
}

nlm4_lock to_lock(const nlm4::Lock& l, LockStrings& s) {
  s.caller_name = l.caller_name;
  s.oh.assign(l.oh.begin(), l.oh.end());
  nlm4_lock out{};
  out.caller_name = s.caller_name.data();
  out.fh.data.data_len = l.fh.len;
  out.fh.data.data_val = mut(l.fh.bytes.data());
  out.oh = s.oh.data();
  out.svid = static_cast<u_int>(l.svid);
  out.l_offset = l.offset;
  out.l_len = l.length;
  return out;
}

/// Why a call cannot go out through libnfs as it is ("" when it can).
std::string unsendable(const nlm4::Netobj& cookie, const nlm4::Lock& l) {
  if (cookie.size() > nlm4::kMaxNetobj) {
    return "cookie of " + std::to_string(cookie.size()) + " bytes (at most 1024)";
  }
  if (l.oh.size() > nlm4::kMaxNetobj) {
    return "owner handle of " + std::to_string(l.oh.size()) + " bytes (at most 1024)";
  }
  if (std::memchr(l.oh.data(), 0, l.oh.size()) != nullptr) {
    return "owner handle holds a NUL byte (libnfs sends handles as C strings: it would reach "
           "the origin cut short, as another owner)";
  }
  if (l.caller_name.size() > nlm4::kMaxStrLen) {
    return "caller name of " + std::to_string(l.caller_name.size()) + " bytes (at most 1024)";
  }
  if (l.caller_name.find('\0') != std::string::npos) return "caller name holds a NUL byte";
  return {};
}

// ---- libnfs -> nfsgw (replies are checked: never trusted) ----------------------

struct MalformedReply : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlm4::Netobj from_cookie(const nlm_cookie& c) {
  if (c.data.data_len > nlm4::kMaxNetobj) {
    throw MalformedReply("cookie of " + std::to_string(c.data.data_len) + " bytes");
  }
  if (c.data.data_len > 0 && c.data.data_val == nullptr) throw MalformedReply("cookie without bytes");
  const auto* p = reinterpret_cast<const std::uint8_t*>(c.data.data_val);
  return nlm4::Netobj(p, p + c.data.data_len);
}

nlm4::Stat from_stat(int s) {
  const auto stat = static_cast<nlm4::Stat>(static_cast<std::uint32_t>(s));
  if (!nlm4::is_valid(stat)) throw MalformedReply("nlm4_stats " + std::to_string(s) + " is no status");
  return stat;
}

nlm4::Holder from_holder(const nlm4_holder& h) {
  nlm4::Holder out;
  out.exclusive = h.exclusive != 0;
  out.svid = static_cast<std::int32_t>(h.svid);
  if (h.oh != nullptr) {
    const std::size_t len = strnlen(h.oh, nlm4::kMaxNetobj + 1);
    if (len > nlm4::kMaxNetobj) throw MalformedReply("holder's owner handle past 1024 bytes");
    out.oh.assign(h.oh, h.oh + len);
  }
  out.offset = h.l_offset;
  out.length = h.l_len;
  return out;
}

template <typename R>
const R& reply_of(void* data) {
  if (data == nullptr) throw MalformedReply("no result");
  return *static_cast<const R*>(data);
}

nlm4::Res from_res(const nlm_cookie& cookie, int status) {
  nlm4::Res out;
  out.cookie = from_cookie(cookie);
  out.stat = from_stat(status);
  return out;
}

// ---- calls as coroutines ---------------------------------------------------------

/// A channel call that resumes a coroutine with an OriginReply<Reply>. `Queue` is
/// int(rpc_context*, RpcCallback, void*); `Convert` is Reply(void* libnfs_result),
/// throwing for a malformed one.
template <typename Reply, typename Handler, typename Queue, typename Convert>
class AwaitedNlmCall final : public ChannelCall {
 public:
  AwaitedNlmCall(Handler handler, Queue queue, Convert convert)
      : handler_(std::move(handler)), queue_(std::move(queue)), convert_(std::move(convert)) {}
  ~AwaitedNlmCall() override {
    // Never leave a coroutine waiting, whatever path dropped the call.
    if (handler_) finish(OriginReply<Reply>{Outcome::Unreachable, std::nullopt, "call dropped"});
  }

  int queue(struct rpc_context* rpc, RpcCallback cb, void* private_data) override {
    return queue_(rpc, cb, private_data);
  }
  void on_reply(void* data) override {
    Reply r = convert_(data);  // may throw: the channel then calls on_end
    finish(OriginReply<Reply>{Outcome::Answered, std::move(r), {}});
  }
  void on_end(Outcome outcome, std::string error) override {
    finish(OriginReply<Reply>{outcome, std::nullopt, std::move(error)});
  }

 private:
  void finish(OriginReply<Reply> reply) {
    if (!handler_) return;
    Handler h = std::move(*handler_);
    handler_.reset();
    auto ex = asio::get_associated_executor(h);
    asio::post(ex, [h = std::move(h), r = std::move(reply)]() mutable { std::move(h)(std::move(r)); });
  }

  std::optional<Handler> handler_;
  Queue queue_;
  Convert convert_;
};

template <typename Reply, typename Queue, typename Convert>
Awaitable<OriginReply<Reply>> run_call(std::shared_ptr<OriginRpcChannel> channel, Credentials cred,
                                  const char* what, Queue queue, Convert convert) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(OriginReply<Reply>)>(
      [channel, cred = std::move(cred), what](auto handler, Queue q, Convert c) mutable {
        auto call = std::make_unique<AwaitedNlmCall<Reply, decltype(handler), Queue, Convert>>(
            std::move(handler), std::move(q), std::move(c));
        call->cred = std::move(cred);
        call->what = what;
        channel->submit(std::move(call));
      },
      asio::use_awaitable, std::move(queue), std::move(convert));
}

/// An answer known without sending anything: a coroutine with no lambda inside
/// (GCC 12 miscompiles lambdas with init-captures in coroutine bodies, so the
/// calls below are plain functions that return an awaitable).
template <typename Reply>
Awaitable<OriginReply<Reply>> not_sent(std::string why) {
  co_return OriginReply<Reply>{Outcome::Unreachable, std::nullopt, "not sent: " + std::move(why)};
}

}  // namespace origin_nlm_cpp

OriginNlm::OriginNlm(asio::io_context& io, std::string host, std::uint16_t nlm_port,
                     std::uint16_t statd_port, std::chrono::milliseconds call_timeout,
                     std::string caller_name)
    : io_(io), host_(host), nlm_port_(nlm_port), call_timeout_(call_timeout), caller_name_(std::move(caller_name)) {
  nlm_ = std::make_shared<OriginRpcChannel>(
      io, OriginRpcChannel::Target{host, nlm_port, nlm4::kProgram, nlm4::kVersion, "NLM"},
      call_timeout);
  statd_ = std::make_shared<OriginRpcChannel>(
      io, OriginRpcChannel::Target{std::move(host), statd_port, kNsmProgram, kNsmVersion, "statd"},
      call_timeout);
}

OriginNlm::~OriginNlm() { stop(); }

void OriginNlm::stop() {
  stopped_ = true;
  nlm_->stop();
  statd_->stop();
}

Credentials OriginNlm::with_machine(const Credentials& cred) const {
  Credentials c = cred;
  if (c.machine_name.empty()) c.machine_name = caller_name_;
  return c;
}

Awaitable<OriginReply<nlm4::TestRes>> OriginNlm::test(const Credentials& cred, nlm4::TestArgs args) {
  using namespace origin_nlm_cpp;
  Credentials c = with_machine(cred);
  if (args.lock.caller_name.empty()) args.lock.caller_name = caller_name_;
  if (std::string why = unsendable(args.cookie, args.lock); !why.empty()) {
    return not_sent<nlm4::TestRes>("TEST: " + why);
  }
  return run_call<nlm4::TestRes>(
      nlm_, std::move(c), "TEST",
      [args = std::move(args)](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        LockStrings s;
        NLM4_TESTargs a{};
        a.cookie = to_cookie(args.cookie);
        a.exclusive = args.exclusive ? 1 : 0;
        a.lock = to_lock(args.lock, s);
        return rpc_nlm4_test_async(rpc, cb, &a, pd);
      },
      [](void* data) {
        const auto& r = reply_of<NLM4_TESTres>(data);
        nlm4::TestRes out;
        out.cookie = from_cookie(r.cookie);
        out.stat = from_stat(r.reply.status);
        if (out.stat == nlm4::Stat::Denied) out.holder = from_holder(r.reply.nlm4_testreply_u.lock.holder);
        return out;
      });
}

Awaitable<OriginReply<nlm4::Res>> OriginNlm::lock(const Credentials& cred, nlm4::LockArgs args) {
  using namespace origin_nlm_cpp;
  Credentials c = with_machine(cred);
  if (args.lock.caller_name.empty()) args.lock.caller_name = caller_name_;
  if (std::string why = unsendable(args.cookie, args.lock); !why.empty()) {
    return not_sent<nlm4::Res>("LOCK: " + why);
  }
  return run_call<nlm4::Res>(
      nlm_, std::move(c), "LOCK",
      [args = std::move(args)](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        LockStrings s;
        NLM4_LOCKargs a{};
        a.cookie = to_cookie(args.cookie);
        a.block = args.block ? 1 : 0;
        a.exclusive = args.exclusive ? 1 : 0;
        a.lock = to_lock(args.lock, s);
        a.reclaim = args.reclaim ? 1 : 0;
        a.state = args.state;
        return rpc_nlm4_lock_async(rpc, cb, &a, pd);
      },
      [](void* data) {
        const auto& r = reply_of<NLM4_LOCKres>(data);
        return from_res(r.cookie, r.status);
      });
}

Awaitable<OriginReply<nlm4::Res>> OriginNlm::cancel(const Credentials& cred, nlm4::CancelArgs args) {
  using namespace origin_nlm_cpp;
  Credentials c = with_machine(cred);
  if (args.lock.caller_name.empty()) args.lock.caller_name = caller_name_;
  if (std::string why = unsendable(args.cookie, args.lock); !why.empty()) {
    return not_sent<nlm4::Res>("CANCEL: " + why);
  }
  return run_call<nlm4::Res>(
      nlm_, std::move(c), "CANCEL",
      [args = std::move(args)](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        LockStrings s;
        NLM4_CANCargs a{};
        a.cookie = to_cookie(args.cookie);
        a.block = args.block ? 1 : 0;
        a.exclusive = args.exclusive ? 1 : 0;
        a.lock = to_lock(args.lock, s);
        return rpc_nlm4_cancel_async(rpc, cb, &a, pd);
      },
      [](void* data) {
        const auto& r = reply_of<NLM4_CANCres>(data);
        return from_res(r.cookie, r.status);
      });
}

Awaitable<OriginReply<nlm4::Res>> OriginNlm::unlock(const Credentials& cred, nlm4::UnlockArgs args) {
  using namespace origin_nlm_cpp;
  Credentials c = with_machine(cred);
  if (args.lock.caller_name.empty()) args.lock.caller_name = caller_name_;
  if (std::string why = unsendable(args.cookie, args.lock); !why.empty()) {
    return not_sent<nlm4::Res>("UNLOCK: " + why);
  }
  return run_call<nlm4::Res>(
      nlm_, std::move(c), "UNLOCK",
      [args = std::move(args)](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        LockStrings s;
        NLM4_UNLOCKargs a{};
        a.cookie = to_cookie(args.cookie);
        a.lock = to_lock(args.lock, s);
        return rpc_nlm4_unlock_async(rpc, cb, &a, pd);
      },
      [](void* data) {
        const auto& r = reply_of<NLM4_UNLOCKres>(data);
        return from_res(r.cookie, r.status);
      });
}

Awaitable<OriginReply<bool>> OriginNlm::ping(const Credentials& cred) {
  using namespace origin_nlm_cpp;
  return run_call<bool>(
      nlm_, with_machine(cred), "NULL",
      [](struct rpc_context* rpc, RpcCallback cb, void* pd) { return rpc_nlm4_null_async(rpc, cb, pd); },
      [](void*) { return true; });
}

Awaitable<OriginReply<bool>> OriginNlm::notify(std::string mon_name, std::int32_t state) {
  using namespace origin_nlm_cpp;
  if (mon_name.size() > kMaxNsmName) {
    return not_sent<bool>("SM_NOTIFY: name of " + std::to_string(mon_name.size()) +
                             " bytes (at most 1024)");
  }
  if (mon_name.empty() || mon_name.find('\0') != std::string::npos) {
    return not_sent<bool>("SM_NOTIFY: the name is empty or holds a NUL byte");
  }
  Credentials nobody;
  nobody.uid = kNobody;
  nobody.gid = kNobody;
  nobody.machine_name = caller_name_;
  return run_call<bool>(
      statd_, std::move(nobody), "SM_NOTIFY",
      [mon_name = std::move(mon_name), state](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        std::string name = mon_name;
        NSM1_NOTIFYargs a{};
        a.mon_name = name.data();
        a.state = state;
        return rpc_nsm1_notify_async(rpc, cb, &a, pd);
      },
      [](void*) { return true; });
}

Awaitable<bool> OriginNlm::notify_restart(std::string mon_name, std::int32_t state) {
  OriginReply<bool> r = co_await notify(std::move(mon_name), state);
  co_return r.outcome == Outcome::Answered;
}

}  // namespace nfsgw::upstream
