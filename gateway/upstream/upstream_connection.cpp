// libnfs is included only here (and in the other .cpp files of this folder).
#include "gateway/upstream/upstream_connection.h"

#include <netinet/in.h>
#include <poll.h>

#include <algorithm>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <spdlog/spdlog.h>

#include "gateway/upstream/origin_socket.h"
#include "gateway/upstream/rpc_error_class.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {
constexpr int kRpcbindPort = 111;
}  // namespace

std::string Endpoint::label() const {
  const char* name = program == 100003 ? "NFS" : program == 100005 ? "MOUNT" : "RPC";
  if (port == 0) return std::string(name) + " " + host + " (via rpcbind)";
  return std::string(name) + " " + host + ":" + std::to_string(port);
}

UpstreamConnection::UpstreamConnection(asio::io_context& io, Endpoint endpoint,
                                       std::size_t index,
                                       std::shared_ptr<ConnectionListener> listener,
                                       UpstreamOptions options)
    : io_(io),
      strand_(asio::make_strand(io)),
      socket_(io),
      retry_timer_(io),
      watchdog_(io),
      endpoint_(std::move(endpoint)),
      options_(options),
      index_(index),
      listener_(std::move(listener)),
      calls_(endpoint_.label(), index_, [this] { origin_answered(); }) {}

UpstreamConnection::~UpstreamConnection() {
  // Normally stop() has run already; this is the path for an io_context torn down
  // with the connection still live. The fd is libnfs's: release, never close.
  if (socket_.is_open()) socket_.release();
  if (rpc_ != nullptr) {
    struct rpc_context* r = rpc_;
    rpc_ = nullptr;
    rpc_destroy_context(r);
  }
  // calls_ answers what it still holds with JUKEBOX.
}

void UpstreamConnection::start() {
  asio::post(strand_, [self = shared_from_this()] {
    if (self->state_ == State::Idle && self->rpc_ == nullptr) self->begin_attempt();
  });
}

void UpstreamConnection::stop() {
  asio::post(strand_, [self = shared_from_this()] { self->stop_on_strand(); });
}

void UpstreamConnection::stop_on_strand() {
  if (state_ == State::Stopped) return;
  const bool was_up = state_ == State::Up;
  state_ = State::Stopped;
  retry_timer_.cancel();
  watchdog_.cancel();
  teardown();
  if (was_up && listener_) listener_->connection_down(index_);
  hand_back_calls();
  listener_.reset();  // breaks the pool <-> connection cycle
  spdlog::debug("upstream {} #{}: stopped", endpoint_.label(), index_);
}

void UpstreamConnection::execute(std::unique_ptr<UpstreamCall> call) {
  calls_.expect();
  asio::post(strand_, [self = shared_from_this(), c = call.release()]() mutable {
    self->start_call(std::unique_ptr<UpstreamCall>(c));
  });
}

// ---- connecting ---------------------------------------------------------------

void UpstreamConnection::begin_attempt() {
  if (state_ == State::Stopped) return;
  if (endpoint_.port != 0) {
    connect_to(endpoint_.port);
    return;
  }
  // Ask rpcbind first, on a context of its own.
  state_ = State::AskingPort;
  attempt_started_ = Clock::now();
  rpc_ = rpc_init_context();
  if (rpc_ == nullptr) {
    fail("cannot create an RPC context");
    return;
  }
  if (rpc_connect_async(rpc_, endpoint_.host.c_str(), kRpcbindPort, &on_connect_cb, this) != 0 ||
      !watch_new_context()) {
    fail("rpcbind: " + rpc_error_text(rpc_));
    return;
  }
  arm();
  arm_watchdog();
}

void UpstreamConnection::connect_to(std::uint16_t port) {
  state_ = State::Connecting;
  attempt_started_ = Clock::now();
  rpc_ = rpc_init_context();
  if (rpc_ == nullptr) {
    fail("cannot create an RPC context");
    return;
  }
  if (rpc_connect_async(rpc_, endpoint_.host.c_str(), port, &on_connect_cb, this) != 0 ||
      !watch_new_context()) {
    fail(rpc_error_text(rpc_));
    return;
  }
  arm();
  arm_watchdog();
}

bool UpstreamConnection::watch_new_context() {
  ++generation_;
  read_armed_ = write_armed_ = false;
  const int fd = rpc_get_fd(rpc_);
  if (fd < 0) return false;
  std::string why;
  if (!apply_origin_socket_options(fd, origin_socket_options(options_.origin_timeout), &why) &&
      failures_in_a_row_ == 0) {
    spdlog::warn("upstream {} #{}: cannot set TCP options on the origin socket: {}",
                 endpoint_.label(), index_, why);
  }
  boost::system::error_code ec;
  socket_.assign(fd, ec);
  if (ec) {
    spdlog::error("upstream {} #{}: cannot watch fd {}: {}", endpoint_.label(), index_, fd,
                  ec.message());
    return false;
  }
  return true;
}

void UpstreamConnection::on_connect_cb(struct rpc_context*, int status, void*, void* self) {
  // Runs inside rpc_service(): only record the outcome, act on it afterwards.
  auto* c = static_cast<UpstreamConnection*>(self);
  c->connect_done_ = true;
  c->connect_ok_ = status == RPC_STATUS_SUCCESS;
}

void UpstreamConnection::on_getport_cb(struct rpc_context*, int status, void* data, void* self) {
  auto* c = static_cast<UpstreamConnection*>(self);
  if (status == RPC_STATUS_SUCCESS && data != nullptr) {
    const std::uint32_t port = *static_cast<const std::uint32_t*>(data);
    c->found_port_ = port <= 65535 ? static_cast<int>(port) : 0;
  } else {
    c->found_port_ = 0;
  }
}

// ---- the event loop -------------------------------------------------------------

void UpstreamConnection::arm() {
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

void UpstreamConnection::on_ready(std::uint64_t generation, int event,
                                  const boost::system::error_code& ec) {
  if (generation != generation_ || rpc_ == nullptr) return;  // an earlier context's wait
  (event == POLLIN ? read_armed_ : write_armed_) = false;
  if (ec == asio::error::operation_aborted) return;
  int revents = event;
  if (ec) revents |= POLLERR;
  after_service(rpc_service(rpc_, revents));
}

void UpstreamConnection::after_service(int rc) {
  if (rc < 0) {
    fail(rpc_error_text(rpc_));
    return;
  }
  if (connect_done_) {
    connect_done_ = false;
    if (!connect_ok_) {
      fail(rpc_error_text(rpc_));
      return;
    }
    if (state_ == State::AskingPort) {
      if (rpc_pmap2_getport_async(rpc_, static_cast<int>(endpoint_.program),
                                  static_cast<int>(endpoint_.version), IPPROTO_TCP,
                                  &on_getport_cb, this) != 0) {
        fail("rpcbind GETPORT: " + rpc_error_text(rpc_));
        return;
      }
    } else if (state_ == State::Connecting) {
      state_ = State::Up;
      // After failed attempts, trusted only once the origin answers on it
      // (on_call_cb): a relay or balancer that accepts and then drops the
      // connection (wan-emu during a cut) must not reset the backoff and log
      // "connected" and "connection lost" ten times a second.
      if (failures_in_a_row_ == 0) {
        spdlog::info("upstream {} #{}: connected", endpoint_.label(), index_);
      } else {
        spdlog::debug("upstream {} #{}: connected at attempt {}; trusted at the origin's first reply",
                      endpoint_.label(), index_, failures_in_a_row_ + 1);
      }
      last_reply_ = Clock::now();
      calls_.attach(rpc_);
      if (listener_) listener_->connection_up(index_);
    }
  }
  if (found_port_ >= 0) {
    const int port = found_port_;
    found_port_ = -1;
    teardown();
    if (port == 0) {
      fail("program " + std::to_string(endpoint_.program) + " version " +
           std::to_string(endpoint_.version) + "/tcp is not registered with rpcbind");
      return;
    }
    connect_to(static_cast<std::uint16_t>(port));
    return;
  }
  if (state_ == State::Up && rpc_ != nullptr && (rpc_which_events(rpc_) & POLLOUT) == 0) {
    calls_.written();  // libnfs's out-queue is empty: the socket took it all
    feed();
  }
  arm();
}

// ---- failure and retry ------------------------------------------------------------

void UpstreamConnection::teardown() {
  ++generation_;
  read_armed_ = write_armed_ = false;
  // Cancels our waits (their handlers see a stale generation); the fd stays
  // libnfs's to close.
  if (socket_.is_open()) socket_.release();
  if (rpc_ != nullptr) {
    struct rpc_context* r = rpc_;
    rpc_ = nullptr;
    rpc_destroy_context(r);  // remaining calls come back to calls_ (CANCEL)
  }
  calls_.detach();
  connect_done_ = false;
  found_port_ = -1;
}

void UpstreamConnection::fail(const std::string& reason) {
  const bool was_up = state_ == State::Up;
  teardown();
  if (state_ == State::Stopped) {
    hand_back_calls();
    return;
  }
  state_ = State::Idle;
  // Still counting failed attempts means no reply came on this connection (the
  // first one starts over), so last_reply_ is when it connected.
  if (was_up && failures_in_a_row_ > 0 && Clock::now() - last_reply_ >= kTrustAfter) {
    start_over();  // up for a while with no call to answer: working, not a flap
  }
  if (was_up) {
    if (failures_in_a_row_ == 0) {
      spdlog::warn("upstream {} #{}: connection lost: {}", endpoint_.label(), index_, reason);
    } else {
      // Lost before the origin ever answered on it: one more failed attempt, and
      // the backoff goes on growing.
      spdlog::debug("upstream {} #{}: connect attempt {} lost before any reply: {}", endpoint_.label(),
                    index_, failures_in_a_row_ + 1, reason);
    }
    if (listener_) listener_->connection_down(index_);
  } else if (failures_in_a_row_ == 0) {
    spdlog::warn("upstream {} #{}: cannot connect: {} (retrying)", endpoint_.label(), index_,
                 reason);
  } else {
    spdlog::debug("upstream {} #{}: connect attempt {} failed: {}", endpoint_.label(), index_,
                  failures_in_a_row_ + 1, reason);
  }
  hand_back_calls();
  schedule_retry();
}

void UpstreamConnection::start_over() {
  failures_in_a_row_ = 0;
  backoff_ = kMinBackoff;
}

void UpstreamConnection::schedule_retry() {
  ++failures_in_a_row_;
  const auto delay = backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  if (failures_in_a_row_ % 30 == 0) {
    spdlog::info("upstream {} #{}: still unreachable after {} attempts, next in {} ms",
                 endpoint_.label(), index_, failures_in_a_row_, delay.count());
  }
  retry_timer_.expires_after(delay);
  retry_timer_.async_wait(asio::bind_executor(
      strand_, [self = shared_from_this()](const boost::system::error_code& ec) {
        if (!ec && self->state_ == State::Idle && self->rpc_ == nullptr) self->begin_attempt();
      }));
}

void UpstreamConnection::hand_back_calls() {
  CallQueue::Calls lost = calls_.take_lost();
  if (!lost.empty()) {
    if (listener_) {
      listener_->calls_lost(std::move(lost));
    } else {
      for (auto& c : lost) c->on_fail(nfs3::Status::Jukebox);
    }
  }
  bounce(calls_.take_unsent());
}

void UpstreamConnection::bounce(CallQueue::Calls calls) {
  if (calls.empty()) return;
  if (listener_) {
    listener_->calls_bounced(std::move(calls));  // never sent: sent again, whatever they are
  } else {
    for (auto& c : calls) c->on_fail(nfs3::Status::Jukebox);
  }
}

// ---- calls -------------------------------------------------------------------------

void UpstreamConnection::start_call(std::unique_ptr<UpstreamCall> call) {
  // Without a context up, the queue gives the call back: never sent, bounced.
  std::unique_ptr<UpstreamCall> back = calls_.add(std::move(call));
  if (back) {
    calls_.release(*back);
    CallQueue::Calls v;
    v.push_back(std::move(back));
    bounce(std::move(v));
    return;
  }
  feed();
}

void UpstreamConnection::feed() {
  if (calls_.feed()) {
    arm();
    arm_watchdog();
  }
}

void UpstreamConnection::origin_answered() {
  last_reply_ = Clock::now();
  if (failures_in_a_row_ > 0) {  // the first answer after failed attempts
    spdlog::info("upstream {} #{}: connected after {} failed attempt(s)", endpoint_.label(), index_,
                 failures_in_a_row_);
    start_over();
  }
}

// ---- the watchdog: frozen origins, stuck attempts, callers gone -------------------

void UpstreamConnection::arm_watchdog() {
  if (state_ == State::Stopped) return;
  const auto now = Clock::now();
  Clock::time_point next;
  if (state_ == State::AskingPort || state_ == State::Connecting) {
    next = attempt_started_ + options_.origin_timeout;
  } else if (state_ == State::Up && calls_.in_flight() > 0) {
    next = std::max(calls_.oldest_queued(), last_reply_) + options_.origin_timeout;
    next = std::min(next, now + kAbandonSweep);
  } else {
    return;  // nothing can time out; the next call or attempt arms it again
  }
  if (watchdog_armed_ && watchdog_due_ <= next) return;  // it fires early enough
  watchdog_armed_ = true;
  watchdog_due_ = next;
  const std::uint64_t gen = ++watchdog_generation_;
  watchdog_.expires_at(next);  // cancels an earlier wait, which sees a stale generation
  watchdog_.async_wait(asio::bind_executor(
      strand_, [self = shared_from_this(), gen](const boost::system::error_code& ec) {
        if (gen != self->watchdog_generation_) return;
        self->watchdog_armed_ = false;
        if (ec == asio::error::operation_aborted) return;
        self->on_watchdog();
      }));
}

void UpstreamConnection::on_watchdog() {
  if (state_ == State::Stopped) return;
  const auto now = Clock::now();
  const auto timeout_ms = std::to_string(options_.origin_timeout.count());
  if (state_ == State::AskingPort || state_ == State::Connecting) {
    if (now >= attempt_started_ + options_.origin_timeout) {
      fail(std::string(state_ == State::AskingPort ? "rpcbind" : "connect") +
           " did not complete within origin_timeout (" + timeout_ms + " ms)");
      return;
    }
  } else if (state_ == State::Up && calls_.in_flight() > 0) {
    if (now - last_sweep_ >= kAbandonSweep) {
      last_sweep_ = now;
      calls_.abandon_calls_of_gone_callers();
    }
    if (calls_.in_flight() > 0 &&
        now >= std::max(calls_.oldest_queued(), last_reply_) + options_.origin_timeout) {
      fail("no reply from the origin within origin_timeout (" + timeout_ms + " ms, " +
           std::to_string(calls_.in_flight()) + " call(s) waiting, oldest " +
           calls_.oldest_what() + ")");
      return;
    }
  }
  arm_watchdog();
}

}  // namespace nfsgw::upstream
