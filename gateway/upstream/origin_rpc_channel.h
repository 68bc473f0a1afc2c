// One TCP connection to one RPC program of the origin (its NLM, its statd), made
// when a call needs it, with a deadline on every call. OriginNlm's transport.
//
// Unlike UpstreamConnection (which keeps a pool of NFS connections up for ever and
// hands lost calls back to be re-sent), this channel is on demand and answers every
// call itself, exactly once, with one of OriginLocks' outcomes:
//   - Answered: the origin's reply, copied out of libnfs (ChannelCall::on_reply);
//   - Unreachable: the call was never sent (rpcbind has no port for the program,
//     the connection failed or did not complete by the call's deadline), or the
//     origin refused it at the RPC level (AUTH error, program / version /
//     procedure unavailable, garbage arguments): either way it never ran;
//   - NoAnswer: sent, and no usable answer by the deadline: the origin went
//     silent (frozen), the connection dropped mid-call, or the reply could not be
//     decoded or made no sense (SYSTEM_ERR, a status outside the enum, ...): the
//     origin may or may not have acted on it.
// The connection is made on the first call (port 0: the program's TCP port is
// asked from the origin's rpcbind first, on that same first attempt), kept while
// it works, and dropped on any failure; the next call makes a new one. A call
// sent and not answered within `timeout` also drops the connection (a frozen
// origin answers nothing else either; libnfs 4.0 cannot take a queued call back),
// so the calls still in flight on it end NoAnswer at once.
//
// libnfs 4.0 is not thread-safe: the rpc_context is touched only on the channel's
// strand. Its socket is watched with a stream_descriptor (released, never closed:
// the fd is libnfs's). libnfs encodes the context's AUTH when a call is queued, so
// each call's AUTH_SYS credentials are set right before it is queued.
#pragma once

#include <utility>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "gateway/call_context.h"
#include "gateway/nlm/origin_locks.h"
#include "gateway/upstream/upstream_call.h"

namespace nfsgw::upstream {

/// One call on a channel. Exactly one of on_reply / on_end runs, on the channel's
/// strand; neither may block (they copy and post). The channel deletes the call
/// once libnfs has given it back.
class ChannelCall {
 public:
  virtual ~ChannelCall() = default;
  /// Queues the request on `rpc` (libnfs encodes it now); returns libnfs's result.
  virtual int queue(struct rpc_context* rpc, RpcCallback cb, void* private_data) = 0;
  /// The origin answered; `data` is libnfs's decoded result, freed after return.
  /// Throws (std::exception) for a reply that makes no sense: the call then ends
  /// NoAnswer with the exception's text.
  virtual void on_reply(void* data) = 0;
  /// No answer: `outcome` is Unreachable or NoAnswer, `error` says why.
  virtual void on_end(nlm::Outcome outcome, std::string error) = 0;

  /// AUTH_SYS identity the call goes out with (never libnfs's default, which is
  /// the gateway process's own uid).
  Credentials cred;
  /// Procedure name, for errors and logs.
  const char* what = "?";

  // Set by the channel.
  void* channel = nullptr;
  std::uint64_t id = 0;
};

class OriginRpcChannel : public std::enable_shared_from_this<OriginRpcChannel> {
 public:
  struct Target {
    std::string host;
    std::uint16_t port = 0;  // 0: ask the host's rpcbind for (program, version)/TCP
    std::uint32_t program = 0;
    std::uint32_t version = 0;
    std::string name;        // "NLM", "statd": for errors and logs
  };

  OriginRpcChannel(boost::asio::io_context& io, Target target, std::chrono::milliseconds timeout);
  ~OriginRpcChannel();
  OriginRpcChannel(const OriginRpcChannel&) = delete;
  OriginRpcChannel& operator=(const OriginRpcChannel&) = delete;

  /// Sends `call` (from any thread), connecting first when needed.
  void submit(std::unique_ptr<ChannelCall> call);
  /// Ends every call (sent ones NoAnswer, the others Unreachable) and refuses new
  /// ones (Unreachable). From any thread.
  void stop();

  /// "NLM 127.0.0.1:4045" or "NLM 127.0.0.1 (via rpcbind)".
  std::string label() const;

 private:
  enum class State { Idle, AskingPort, Connecting, Up, Stopped };
  struct Slot {
    std::unique_ptr<ChannelCall> call;
    std::unique_ptr<boost::asio::steady_timer> deadline;
    bool sent = false;   // inside libnfs: only libnfs's callback may delete it
    bool ended = false;  // on_reply / on_end has run
  };

  static void on_connect_cb(struct rpc_context* rpc, int status, void* data, void* self);
  static void on_getport_cb(struct rpc_context* rpc, int status, void* data, void* self);
  static void on_call_cb(struct rpc_context* rpc, int status, void* data, void* call);

  void add(std::unique_ptr<ChannelCall> call);
  void begin_attempt();
  bool open_context(std::uint16_t port);
  void arm();
  void on_ready(std::uint64_t generation, int event, const boost::system::error_code& ec);
  void after_service(int rc);
  void send(Slot& slot);
  void send_waiting();
  void completed(ChannelCall* call, int status, void* data);
  void on_deadline(std::uint64_t id);
  /// Drops the connection: sent calls end NoAnswer, waiting ones Unreachable.
  void fail(const std::string& reason);
  void end(Slot& slot, nlm::Outcome outcome, const std::string& error);
  void stop_on_strand();
  void apply_credentials(const Credentials& cred);

  boost::asio::io_context& io_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::posix::stream_descriptor socket_;
  Target target_;
  std::chrono::milliseconds timeout_;

  // Everything below is touched only on strand_.
  struct rpc_context* rpc_ = nullptr;
  State state_ = State::Idle;
  std::uint64_t generation_ = 0;  // bumps with each context; stale waits ignore themselves
  bool read_armed_ = false;
  bool write_armed_ = false;
  bool connect_done_ = false;  // set by the connect callback, acted on after rpc_service
  bool connect_ok_ = false;
  std::string connect_error_;
  int found_port_ = -1;        // set by the getport callback: >0 port, 0 not registered
  std::uint16_t port_ = 0;     // the port connected to (for errors)
  /// Why the context is being destroyed: what calls libnfs gives back then end with.
  std::string ending_reason_;
  bool auth_set_ = false;
  Credentials auth_cred_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, Slot> slots_;  // by id: the oldest first
};

}  // namespace nfsgw::upstream
