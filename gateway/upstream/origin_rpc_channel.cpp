// libnfs is included only here (and in the other .cpp files of this folder).
#include "gateway/upstream/origin_rpc_channel.h"

#include <netinet/in.h>
#include <poll.h>

#include <cstring>
#include <vector>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <spdlog/spdlog.h>

#include "gateway/upstream/origin_socket.h"
#include "gateway/upstream/rpc_error_class.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;
using nlm::Outcome;

namespace origin_rpc_channel_cpp {
constexpr int kRpcbindPort = 111;
constexpr std::size_t kMaxMachineName = 255;  // AUTH_SYS: a name of at most 255 bytes

bool starts_with(const char* s, const char* prefix) {
  return s != nullptr && std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}
}  // namespace origin_rpc_channel_cpp

OriginRpcChannel::OriginRpcChannel(asio::io_context& io, Target target,
                                   std::chrono::milliseconds timeout)
    : io_(io), strand_(asio::make_strand(io)), socket_(io), target_(std::move(target)),
      timeout_(timeout) {}

OriginRpcChannel::~OriginRpcChannel() {
  // Normally stop() has run; this is the path of an io_context torn down first.
  if (socket_.is_open()) socket_.release();
  ending_reason_ = target_.name + " channel destroyed";
  if (rpc_ != nullptr) {
    struct rpc_context* r = rpc_;
    rpc_ = nullptr;
    rpc_destroy_context(r);  // sent calls come back (CANCEL): NoAnswer
  }
  for (auto& [id, slot] : slots_) end(slot, Outcome::Unreachable, ending_reason_);
}

std::string OriginRpcChannel::label() const {
  if (target_.port == 0) return target_.name + " " + target_.host + " (via rpcbind)";
  return target_.name + " " + target_.host + ":" + std::to_string(target_.port);
}

void OriginRpcChannel::submit(std::unique_ptr<ChannelCall> call) {
  asio::post(strand_, [self = shared_from_this(), c = call.release()]() mutable {
    self->add(std::unique_ptr<ChannelCall>(c));
  });
}

void OriginRpcChannel::stop() {
  asio::post(strand_, [self = shared_from_this()] { self->stop_on_strand(); });
}

void OriginRpcChannel::stop_on_strand() {
  if (state_ == State::Stopped) return;
  state_ = State::Stopped;
  fail(target_.name + " client stopped");
}

// ---- calls -------------------------------------------------------------------------

void OriginRpcChannel::add(std::unique_ptr<ChannelCall> call) {
  if (state_ == State::Stopped) {
    call->on_end(Outcome::Unreachable, target_.name + " client stopped");
    return;
  }
  const std::uint64_t id = next_id_++;
  call->channel = this;
  call->id = id;
  Slot& slot = slots_[id];
  slot.call = std::move(call);
  slot.deadline = std::make_unique<asio::steady_timer>(strand_);
  slot.deadline->expires_after(timeout_);
  slot.deadline->async_wait([self = shared_from_this(), id](const boost::system::error_code& ec) {
    if (!ec) self->on_deadline(id);
  });
  if (state_ == State::Up) {
    send(slot);
    arm();  // libnfs now wants POLLOUT for it
  } else if (state_ == State::Idle) {
    begin_attempt();
  }  // AskingPort / Connecting: sent once up
}

void OriginRpcChannel::apply_credentials(const Credentials& c) {
  if (auth_set_ && auth_cred_.uid == c.uid && auth_cred_.gid == c.gid && auth_cred_.gids == c.gids &&
      auth_cred_.machine_name == c.machine_name) {
    return;
  }
  auth_set_ = false;
  std::string machine = c.machine_name.substr(0, origin_rpc_channel_cpp::kMaxMachineName);
  if (machine.empty()) machine = "nfsgw";
  struct AUTH* auth = libnfs_authunix_create(
      machine.c_str(), c.uid, c.gid, static_cast<std::uint32_t>(c.gids.size()),
      c.gids.empty() ? nullptr : const_cast<std::uint32_t*>(c.gids.data()));
  if (auth == nullptr) return;
  rpc_set_auth(rpc_, auth);
  auth_cred_ = c;
  auth_set_ = true;
}

void OriginRpcChannel::send(Slot& slot) {
  if (slot.sent || slot.ended) return;
  ChannelCall* call = slot.call.get();
  // libnfs encodes the AUTH when the call is queued: set it right before.
  apply_credentials(call->cred);
  if (!auth_set_) {
    const std::uint64_t id = call->id;
    end(slot, Outcome::Unreachable, std::string("cannot build AUTH_SYS credentials for ") + call->what);
    slots_.erase(id);
    return;
  }
  if (call->queue(rpc_, &on_call_cb, call) != 0) {
    const std::uint64_t id = call->id;
    end(slot, Outcome::Unreachable,
        std::string("cannot queue ") + call->what + " to " + label() + ": " + rpc_error_text(rpc_));
    slots_.erase(id);
    return;
  }
  slot.sent = true;
}

void OriginRpcChannel::send_waiting() {
  std::vector<std::uint64_t> ids;
  for (auto& [id, slot] : slots_) {
    if (!slot.sent && !slot.ended) ids.push_back(id);
  }
  for (std::uint64_t id : ids) {
    auto it = slots_.find(id);
    if (it != slots_.end() && state_ == State::Up) send(it->second);
  }
  arm();
}

void OriginRpcChannel::end(Slot& slot, Outcome outcome, const std::string& error) {
  if (slot.ended) return;
  slot.ended = true;
  if (slot.deadline) slot.deadline->cancel();
  slot.call->on_end(outcome, error);
}

void OriginRpcChannel::on_call_cb(struct rpc_context*, int status, void* data, void* call_ptr) {
  auto* call = static_cast<ChannelCall*>(call_ptr);
  static_cast<OriginRpcChannel*>(call->channel)->completed(call, status, data);
}

void OriginRpcChannel::completed(ChannelCall* call, int status, void* data) {
  // Runs inside rpc_service() or rpc_destroy_context(): never touches the context.
  auto it = slots_.find(call->id);
  if (it == slots_.end()) return;  // cannot happen: libnfs gives a call back once
  Slot& slot = it->second;
  if (!slot.ended) {
    if (status == RPC_STATUS_SUCCESS) {
      slot.ended = true;
      if (slot.deadline) slot.deadline->cancel();
      try {
        call->on_reply(data);
      } catch (const std::exception& e) {
        call->on_end(Outcome::NoAnswer, std::string("malformed ") + call->what + " reply from " +
                                            label() + ": " + e.what());
      }
    } else if (status == RPC_STATUS_CANCEL) {
      end(slot, Outcome::NoAnswer,
          ending_reason_.empty() ? std::string(call->what) + " cancelled" : ending_reason_);
    } else {
      const char* message = status == RPC_STATUS_ERROR ? static_cast<const char*>(data) : nullptr;
      const std::string text = message != nullptr ? message : "RPC failure";
      switch (classify_rpc_failure(status, message)) {
        case RpcFailure::Denied:
          end(slot, Outcome::Unreachable,
              label() + " refused the credentials of " + call->what + " (uid " +
                  std::to_string(call->cred.uid) + "): " + text);
          break;
        case RpcFailure::BadReply:
          // Refused before running (program, version or procedure unavailable,
          // garbage arguments), or SYSTEM_ERR / an unknown reply: may have run.
          if (origin_rpc_channel_cpp::starts_with(message, "Server responded:") &&
              !origin_rpc_channel_cpp::starts_with(message, "Server responded: System Error")) {
            end(slot, Outcome::Unreachable, label() + " refused " + call->what + ": " + text);
          } else {
            end(slot, Outcome::NoAnswer, label() + ": " + call->what + ": " + text);
          }
          break;
        case RpcFailure::ConnectionLost:
          end(slot, Outcome::NoAnswer,
              "connection to " + label() + " lost during " + call->what + ": " + text);
          break;
      }
    }
  }
  slots_.erase(it);  // libnfs is done with the call
}

void OriginRpcChannel::on_deadline(std::uint64_t id) {
  auto it = slots_.find(id);
  if (it == slots_.end() || it->second.ended) return;
  const std::string ms = std::to_string(timeout_.count()) + " ms";
  if (it->second.sent) {
    const std::string what = it->second.call->what;
    end(it->second, Outcome::NoAnswer, "no answer to " + what + " from " + label() + " within " + ms);
    // A frozen origin answers nothing else either, and libnfs cannot take the
    // call back: the connection goes (its other calls end NoAnswer), the next
    // call makes a new one.
    fail(what + " got no answer from " + label() + " within " + ms);
    return;
  }
  const char* step = state_ == State::AskingPort ? "rpcbind did not answer" : "could not connect";
  fail(std::string(step) + " (" + label() + ") within " + ms);
}

// ---- connecting ---------------------------------------------------------------

void OriginRpcChannel::begin_attempt() {
  ending_reason_.clear();
  if (target_.port != 0) {
    state_ = State::Connecting;
    port_ = target_.port;
    if (!open_context(target_.port)) return;
  } else {
    state_ = State::AskingPort;
    port_ = origin_rpc_channel_cpp::kRpcbindPort;
    if (!open_context(origin_rpc_channel_cpp::kRpcbindPort)) return;
  }
  arm();
}

bool OriginRpcChannel::open_context(std::uint16_t port) {
  rpc_ = rpc_init_context();
  if (rpc_ == nullptr) {
    fail("cannot create an RPC context");
    return false;
  }
  ++generation_;
  read_armed_ = write_armed_ = false;
  auth_set_ = false;
  const std::string where = target_.host + ":" + std::to_string(port);
  if (rpc_connect_async(rpc_, target_.host.c_str(), port, &on_connect_cb, this) != 0) {
    fail("cannot connect to " + where + ": " + rpc_error_text(rpc_));
    return false;
  }
  const int fd = rpc_get_fd(rpc_);
  if (fd < 0) {
    fail("cannot connect to " + where + ": no socket");
    return false;
  }
  std::string why;
  if (!apply_origin_socket_options(fd, origin_socket_options(timeout_), &why)) {
    spdlog::debug("origin {}: cannot set TCP options: {}", label(), why);
  }
  boost::system::error_code ec;
  socket_.assign(fd, ec);
  if (ec) {
    fail("cannot watch the socket to " + where + ": " + ec.message());
    return false;
  }
  return true;
}

void OriginRpcChannel::on_connect_cb(struct rpc_context*, int status, void* data, void* self) {
  // Runs inside rpc_service(): only record the outcome, act on it afterwards.
  auto* c = static_cast<OriginRpcChannel*>(self);
  c->connect_done_ = true;
  c->connect_ok_ = status == RPC_STATUS_SUCCESS;
  c->connect_error_ = status == RPC_STATUS_ERROR && data != nullptr
                          ? static_cast<const char*>(data)
                          : std::string("connection failed");
}

void OriginRpcChannel::on_getport_cb(struct rpc_context*, int status, void* data, void* self) {
  auto* c = static_cast<OriginRpcChannel*>(self);
  if (status == RPC_STATUS_SUCCESS && data != nullptr) {
    const std::uint32_t port = *static_cast<const std::uint32_t*>(data);
    c->found_port_ = port <= 65535 ? static_cast<int>(port) : 0;
  } else {
    c->found_port_ = 0;
  }
}

// ---- the event loop -------------------------------------------------------------

void OriginRpcChannel::arm() {
  if (rpc_ == nullptr || !socket_.is_open()) return;
  const int events = rpc_which_events(rpc_);
  const std::uint64_t gen = generation_;
  if ((events & POLLIN) != 0 && !read_armed_) {
    read_armed_ = true;
    socket_.async_wait(asio::posix::stream_descriptor::wait_read,
                       asio::bind_executor(strand_, [self = shared_from_this(), gen](
                                                        const boost::system::error_code& ec) {
                         self->on_ready(gen, POLLIN, ec);
                       }));
  }
  if ((events & POLLOUT) != 0 && !write_armed_) {
    write_armed_ = true;
    socket_.async_wait(asio::posix::stream_descriptor::wait_write,
                       asio::bind_executor(strand_, [self = shared_from_this(), gen](
                                                        const boost::system::error_code& ec) {
                         self->on_ready(gen, POLLOUT, ec);
                       }));
  }
}

void OriginRpcChannel::on_ready(std::uint64_t generation, int event,
                                const boost::system::error_code& ec) {
  if (generation != generation_ || rpc_ == nullptr) return;  // an earlier context's wait
  (event == POLLIN ? read_armed_ : write_armed_) = false;
  if (ec == asio::error::operation_aborted) return;
  int revents = event;
  if (ec) revents |= POLLERR;
  after_service(rpc_service(rpc_, revents));
}

void OriginRpcChannel::after_service(int rc) {
  const std::string where = target_.host + ":" + std::to_string(port_);
  if (connect_done_) {
    connect_done_ = false;
    if (!connect_ok_) {
      fail("cannot connect to " + (state_ == State::AskingPort ? "rpcbind at " : target_.name + " at ") +
           where + ": " + connect_error_);
      return;
    }
    if (rc >= 0 && state_ == State::AskingPort) {
      // rpcbind's own AUTH is libnfs's default; it asks nothing of it.
      if (rpc_pmap2_getport_async(rpc_, static_cast<int>(target_.program),
                                  static_cast<int>(target_.version), IPPROTO_TCP,
                                  &on_getport_cb, this) != 0) {
        fail("rpcbind GETPORT at " + where + ": " + rpc_error_text(rpc_));
        return;
      }
    } else if (rc >= 0 && state_ == State::Connecting) {
      state_ = State::Up;
      spdlog::debug("origin {}: connected to port {}", label(), port_);
      send_waiting();
    }
  }
  if (rc < 0) {
    const bool attempt = state_ == State::AskingPort || state_ == State::Connecting;
    fail((attempt ? "cannot connect to " : "connection lost to ") +
         (state_ == State::AskingPort ? "rpcbind at " : target_.name + " at ") + where + ": " +
         rpc_error_text(rpc_));
    return;
  }
  if (found_port_ >= 0) {
    const int port = found_port_;
    found_port_ = -1;
    // The rpcbind context carried no call of ours: destroying it ends nothing.
    ++generation_;
    if (socket_.is_open()) socket_.release();
    struct rpc_context* r = rpc_;
    rpc_ = nullptr;
    rpc_destroy_context(r);
    if (port == 0) {
      fail(target_.name + " (program " + std::to_string(target_.program) + " version " +
           std::to_string(target_.version) + "/tcp) is not registered with rpcbind at " +
           target_.host);
      return;
    }
    state_ = State::Connecting;
    port_ = static_cast<std::uint16_t>(port);
    if (!open_context(port_)) return;
  }
  arm();
}

// ---- failure -------------------------------------------------------------------

void OriginRpcChannel::fail(const std::string& reason) {
  const bool was_up = state_ == State::Up;
  if (state_ != State::Stopped) state_ = State::Idle;
  ending_reason_ = reason;
  ++generation_;
  read_armed_ = write_armed_ = false;
  connect_done_ = false;
  found_port_ = -1;
  auth_set_ = false;
  if (socket_.is_open()) socket_.release();  // the fd is libnfs's to close
  if (rpc_ != nullptr) {
    struct rpc_context* r = rpc_;
    rpc_ = nullptr;
    rpc_destroy_context(r);  // sent calls come back (CANCEL): NoAnswer(reason)
  }
  // What is left was never sent (or, should libnfs not have given a call back,
  // can no longer be answered by it): it ends here.
  for (auto it = slots_.begin(); it != slots_.end();) {
    end(it->second, it->second.sent ? Outcome::NoAnswer : Outcome::Unreachable, reason);
    it = slots_.erase(it);
  }
  if (was_up) {
    spdlog::warn("origin {}: connection dropped: {}", label(), reason);
  } else if (state_ != State::Stopped) {
    spdlog::debug("origin {}: {}", label(), reason);
  }
}

}  // namespace nfsgw::upstream
