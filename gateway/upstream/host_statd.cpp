// libnfs's raw NSM header is included only here (it cannot share a translation
// unit with libtirpc's rpc/rpc.h).
#include "gateway/upstream/host_statd.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <functional>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nfsc/libnfs-zdr.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nsm.h>

#include "gateway/fan_out.h"
#include "gateway/upstream/origin_rpc_channel.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;
using nlm::MonitorReply;

namespace host_statd_cpp {

constexpr std::uint32_t kNsmProgram = 100024;
constexpr std::uint32_t kNsmVersion = 1;
constexpr std::size_t kMaxName = 1024;  // SM_MAXSTRLEN

/// Why `name` cannot go out as an NSM string ("" when it can).
std::string unsendable(const char* what, const std::string& name) {
  if (name.empty()) return std::string(what) + " is empty";
  if (name.size() > kMaxName) {
    return std::string(what) + " of " + std::to_string(name.size()) + " bytes (at most 1024)";
  }
  if (name.find('\0') != std::string::npos) return std::string(what) + " holds a NUL byte";
  return {};
}

/// An awaitable that answers `r` at once.
Awaitable<MonitorReply> ready(MonitorReply r) { co_return r; }

Awaitable<MonitorReply> not_sent(const char* proc, std::string why) {
  return ready(MonitorReply{false, 0, std::string("not sent: ") + proc + ": " + std::move(why)});
}

/// statd's calls carry root's AUTH_SYS (statd asks no credentials of a local
/// caller; nothing here is on a client's behalf).
Credentials statd_credentials(const std::string& machine) {
  Credentials c;
  c.uid = 0;
  c.gid = 0;
  c.machine_name = machine;
  return c;
}

/// A channel call that resumes a coroutine with a MonitorReply. Not a template
/// over the handler: the call is built in a plain function and only raw pointers
/// (trivially copyable) go through async_initiate, whose arguments become the
/// parameters of a coroutine: GCC 12 copied a closure holding std::strings there
/// bitwise (valgrind: strings pointing into the caller's frame, freed invalidly).
class StatdCall final : public ChannelCall {
 public:
  using Queue = std::function<int(struct rpc_context*, RpcCallback, void*)>;
  using Convert = std::function<MonitorReply(void*)>;
  using Done = std::function<void(MonitorReply)>;

  StatdCall(Queue queue, Convert convert) : queue_(std::move(queue)), convert_(std::move(convert)) {}
  ~StatdCall() override {
    if (done_) finish(MonitorReply{false, 0, std::string(what) + ": call dropped"});
  }
  void set_done(Done done) { done_ = std::move(done); }
  int queue(struct rpc_context* rpc, RpcCallback cb, void* private_data) override {
    return queue_(rpc, cb, private_data);
  }
  void on_reply(void* data) override { finish(convert_(data)); }
  void on_end(nlm::Outcome outcome, std::string error) override {
    const char* how = outcome == nlm::Outcome::NoAnswer ? " (sent, no answer): " : " (not sent): ";
    finish(MonitorReply{false, 0, std::string(what) + how + std::move(error)});
  }

 private:
  void finish(MonitorReply reply) {
    if (!done_) return;
    Done d = std::move(done_);
    done_ = nullptr;
    d(std::move(reply));
  }

  Done done_;
  Queue queue_;
  Convert convert_;
};

}  // namespace host_statd_cpp

/// One call at a time to the host's statd. Linux's statd (libtirpc's server) left
/// a second call that arrived on its TCP connection with the first unanswered
/// until the caller gave up (seen: an SM_MON sent while an SM_UNMON was in flight
/// went unanswered for the whole 5 s bound), so HostStatd never pipelines.
struct HostStatd::Serial {
  std::mutex mu;
  bool busy = false;
  std::deque<std::function<void()>> waiting;

  /// Runs `submit` now, or once the calls before it have ended.
  void enter(std::function<void()> submit) {
    {
      std::lock_guard g(mu);
      if (busy) {
        waiting.push_back(std::move(submit));
        return;
      }
      busy = true;
    }
    submit();
  }
  /// The call in flight ended: the next goes.
  void leave() {
    std::function<void()> next;
    {
      std::lock_guard g(mu);
      if (waiting.empty()) {
        busy = false;
        return;
      }
      next = std::move(waiting.front());
      waiting.pop_front();
    }
    next();
  }
};

namespace host_statd_cpp {

/// Submits `call` (owned by the channel from then on) and resumes the caller with
/// its reply. `channel` must outlive the call's submission (the caller holds it).
/// With `serial`, after the calls before it on that statd have ended.
Awaitable<MonitorReply> await_call(OriginRpcChannel* channel, StatdCall* call,
                                   std::shared_ptr<HostStatd::Serial> serial) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(MonitorReply)>(
      [channel, call, serial](auto handler) {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        call->set_done([h, serial](MonitorReply r) {
          auto ex = asio::get_associated_executor(*h);
          asio::post(ex, [h, r = std::move(r)]() mutable { std::move(*h)(std::move(r)); });
          if (serial) serial->leave();
        });
        if (serial) {
          serial->enter([channel, call] { channel->submit(std::unique_ptr<ChannelCall>(call)); });
        } else {
          channel->submit(std::unique_ptr<ChannelCall>(call));
        }
      },
      asio::use_awaitable);
}

/// Builds the call (a plain function: its closures are moved as C++ says) and
/// awaits it.
Awaitable<MonitorReply> run_call(const std::shared_ptr<OriginRpcChannel>& channel, Credentials cred,
                                 const char* what, StatdCall::Queue queue, StatdCall::Convert convert,
                                 std::shared_ptr<HostStatd::Serial> serial = nullptr) {
  auto call = std::make_unique<StatdCall>(std::move(queue), std::move(convert));
  call->cred = std::move(cred);
  call->what = what;
  return await_call(channel.get(), call.release(), std::move(serial));
}

/// sm_stat_res (SM_STAT, SM_MON): ok only for stat_succ.
MonitorReply from_stat_res(void* data, const char* what) {
  if (data == nullptr) return MonitorReply{false, 0, std::string(what) + ": no result"};
  const auto* r = static_cast<const NSM1_STATres*>(data);
  if (r->res == NSM_STAT_SUCC) return MonitorReply{true, r->state, {}};
  if (r->res == NSM_STAT_FAIL) {
    return MonitorReply{false, r->state, std::string(what) + ": statd answered stat_fail"};
  }
  return MonitorReply{false, 0, std::string(what) + ": malformed reply (res " +
                                    std::to_string(static_cast<int>(r->res)) + ")"};
}

MonitorReply from_sm_stat(void* data, const char* what) {
  if (data == nullptr) return MonitorReply{false, 0, std::string(what) + ": no result"};
  return MonitorReply{true, static_cast<const NSM1_UNMONres*>(data)->state, {}};
}

nsm_my_id my_id_of(const HostStatd::Options& o, std::string& name_storage) {
  name_storage = o.my_name;
  nsm_my_id id{};
  id.my_name = name_storage.data();
  id.my_prog = o.my_prog;
  id.my_vers = o.my_vers;
  id.my_proc = o.my_proc;
  return id;
}

std::shared_ptr<OriginRpcChannel> statd_channel(asio::io_context& io, std::string host, std::uint16_t port,
                                                std::chrono::milliseconds timeout) {
  return std::make_shared<OriginRpcChannel>(
      io, OriginRpcChannel::Target{std::move(host), port, kNsmProgram, kNsmVersion, "statd"}, timeout);
}

Awaitable<MonitorReply> send_notify(std::shared_ptr<OriginRpcChannel> channel, std::string machine,
                                    std::string mon_name, std::int32_t state,
                                    std::shared_ptr<HostStatd::Serial> serial = nullptr) {
  if (std::string why = unsendable("mon_name", mon_name); !why.empty()) return not_sent("SM_NOTIFY", why);
  return run_call(
      std::move(channel), statd_credentials(machine), "SM_NOTIFY",
      [mon_name = std::move(mon_name), state](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        std::string name = mon_name;
        NSM1_NOTIFYargs a{};
        a.mon_name = name.data();
        a.state = state;
        return rpc_nsm1_notify_async(rpc, cb, &a, pd);
      },
      [](void*) { return MonitorReply{true, 0, {}}; }, std::move(serial));
}

}  // namespace host_statd_cpp

HostStatd::HostStatd(asio::io_context& io, Options options)
    : options_(std::move(options)), serial_(std::make_shared<Serial>()) {
  channel_ = host_statd_cpp::statd_channel(io, options_.host, options_.port, options_.timeout);
}

HostStatd::~HostStatd() { stop(); }

void HostStatd::stop() { channel_->stop(); }

Awaitable<MonitorReply> HostStatd::monitor(std::string host, nsm::Priv priv) {
  using namespace host_statd_cpp;
  if (std::string why = unsendable("mon_name", host); !why.empty()) return not_sent("SM_MON", why);
  if (std::string why = unsendable("my_name", options_.my_name); !why.empty()) return not_sent("SM_MON", why);
  return run_call(
      channel_, statd_credentials(options_.my_name), "SM_MON",
      [host = std::move(host), priv, o = options_](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        std::string mon_name = host;
        std::string my_name;
        NSM1_MONargs a{};
        a.mon_id.mon_name = mon_name.data();
        a.mon_id.my_id = my_id_of(o, my_name);
        static_assert(sizeof(a.priv) == nsm::kPrivSize);
        std::memcpy(a.priv, priv.data(), priv.size());
        return rpc_nsm1_mon_async(rpc, cb, &a, pd);
      },
      [](void* data) { return from_stat_res(data, "SM_MON"); }, serial_);
}

Awaitable<MonitorReply> HostStatd::unmonitor(std::string host) {
  using namespace host_statd_cpp;
  if (std::string why = unsendable("mon_name", host); !why.empty()) return not_sent("SM_UNMON", why);
  if (std::string why = unsendable("my_name", options_.my_name); !why.empty()) return not_sent("SM_UNMON", why);
  return run_call(
      channel_, statd_credentials(options_.my_name), "SM_UNMON",
      [host = std::move(host), o = options_](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        std::string mon_name = host;
        std::string my_name;
        NSM1_UNMONargs a{};
        a.mon_id.mon_name = mon_name.data();
        a.mon_id.my_id = my_id_of(o, my_name);
        return rpc_nsm1_unmon_async(rpc, cb, &a, pd);
      },
      [](void* data) { return from_sm_stat(data, "SM_UNMON"); }, serial_);
}

Awaitable<MonitorReply> HostStatd::unmonitor_all() {
  using namespace host_statd_cpp;
  if (std::string why = unsendable("my_name", options_.my_name); !why.empty()) {
    return not_sent("SM_UNMON_ALL", why);
  }
  return run_call(
      channel_, statd_credentials(options_.my_name), "SM_UNMON_ALL",
      [o = options_](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        std::string my_name;
        NSM1_UNMONALLargs a{};
        a.my_id = my_id_of(o, my_name);
        return rpc_nsm1_unmonall_async(rpc, cb, &a, pd);
      },
      [](void* data) { return from_sm_stat(data, "SM_UNMON_ALL"); }, serial_);
}

Awaitable<MonitorReply> HostStatd::stat(std::string host) {
  using namespace host_statd_cpp;
  if (std::string why = unsendable("mon_name", host); !why.empty()) return not_sent("SM_STAT", why);
  return run_call(
      channel_, statd_credentials(options_.my_name), "SM_STAT",
      [host = std::move(host)](struct rpc_context* rpc, RpcCallback cb, void* pd) {
        std::string mon_name = host;
        NSM1_STATargs a{};
        a.mon_name = mon_name.data();
        return rpc_nsm1_stat_async(rpc, cb, &a, pd);
      },
      [](void* data) { return from_stat_res(data, "SM_STAT"); }, serial_);
}

Awaitable<MonitorReply> HostStatd::notify(std::string mon_name, std::int32_t state) {
  return host_statd_cpp::send_notify(channel_, options_.my_name, std::move(mon_name), state, serial_);
}

Awaitable<MonitorReply> notify_statd(asio::io_context& io, std::string address, std::uint16_t port,
                                     std::string mon_name, std::int32_t state,
                                     std::chrono::milliseconds timeout) {
  using namespace host_statd_cpp;
  if (std::string why = unsendable("address", address); !why.empty()) {
    co_return co_await not_sent("SM_NOTIFY", why);
  }
  auto channel = statd_channel(io, address, port, timeout);
  std::string machine = mon_name;
  MonitorReply r = co_await send_notify(channel, std::move(machine), std::move(mon_name), state);
  channel->stop();
  if (!r.ok) r.error = address + ": " + r.error;
  co_return r;
}

namespace host_statd_cpp {

/// One host's notice, as a plain function (no closure inside a coroutine body).
Awaitable<void> notify_one(asio::io_context& io, const nlm::MonitoredHost& h, MonitorReply& reply,
                           std::int32_t state, std::uint16_t port, std::chrono::milliseconds timeout) {
  reply = co_await notify_statd(io, h.address, port, h.my_name, state, timeout);
}

}  // namespace host_statd_cpp

Awaitable<std::vector<MonitorReply>> notify_restart(asio::io_context& io,
                                                    std::vector<nlm::MonitoredHost> hosts,
                                                    std::int32_t state, std::uint16_t port,
                                                    std::chrono::milliseconds timeout,
                                                    std::size_t parallel) {
  std::vector<MonitorReply> replies(hosts.size(), MonitorReply{false, 0, "not notified"});
  FanOutWork work = [&io, &hosts, &replies, state, port, timeout](std::size_t i) {
    return host_statd_cpp::notify_one(io, hosts[i], replies[i], state, port, timeout);
  };
  Awaitable<void> all = fan_out(io.get_executor(), hosts.size(), parallel, std::move(work));
  co_await std::move(all);
  co_return replies;
}

}  // namespace nfsgw::upstream
