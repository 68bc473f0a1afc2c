// libnfs is included only here (and in the other .cpp files of this folder).
#include "gateway/upstream/call_queue.h"

#include <exception>
#include <utility>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <spdlog/spdlog.h>

#include "gateway/upstream/rpc_error_class.h"

namespace nfsgw::upstream {

namespace {
constexpr std::size_t kMaxMachineName = 255;  // AUTH_SYS: a name of at most 255 bytes
}  // namespace

CallQueue::CallQueue(std::string label, std::size_t index, std::function<void()> answered)
    : label_(std::move(label)), index_(index), answered_(std::move(answered)) {}

CallQueue::~CallQueue() {
  for (auto& c : lost_) c->on_fail(nfs3::Status::Jukebox);
  for (auto& c : unsent_) c->on_fail(nfs3::Status::Jukebox);
}

void CallQueue::attach(struct rpc_context* rpc) {
  rpc_ = rpc;
  auth_is_default_ = true;
}

void CallQueue::detach() {
  rpc_ = nullptr;
  auth_is_default_ = true;
  in_flight_.clear();  // libnfs handed every call back while being destroyed
  unwritten_bytes_ = 0;
}

void CallQueue::drop(std::unique_ptr<UpstreamCall> call) {
  load_.fetch_sub(1, std::memory_order_relaxed);
  call->abandon();  // never encoded: nothing of it is left
}

std::unique_ptr<UpstreamCall> CallQueue::add(std::unique_ptr<UpstreamCall> call) {
  if (call->abandoned || call->caller_left()) {
    drop(std::move(call));
    return nullptr;
  }
  if (rpc_ == nullptr) return call;
  unsent_.push_back(std::move(call));
  return nullptr;
}

bool CallQueue::feed() {
  bool sent = false;
  while (!unsent_.empty() && rpc_ != nullptr) {
    // Nothing inside libnfs means nothing unwritten, whatever the count says.
    if (unwritten_bytes_ >= kMaxUnsentBytes && !in_flight_.empty()) break;
    std::unique_ptr<UpstreamCall> call = std::move(unsent_.front());
    unsent_.pop_front();
    if (call->abandoned || call->caller_left()) {
      drop(std::move(call));
      continue;
    }
    unwritten_bytes_ += kCallBytes + call->payload;
    send_to_libnfs(std::move(call));
    sent = true;
  }
  return sent;
}

void CallQueue::apply_credentials(const UpstreamCall& call) {
  // libnfs encodes the context's AUTH when a call is queued, so setting it right
  // before queueing sends exactly this caller's identity with this call.
  if (!call.cred) {
    if (!auth_is_default_) {
      rpc_set_auth(rpc_, libnfs_authunix_create_default());
      auth_is_default_ = true;
    }
    return;
  }
  const Credentials& c = *call.cred;
  if (!auth_is_default_ && auth_cred_.uid == c.uid && auth_cred_.gid == c.gid &&
      auth_cred_.gids == c.gids && auth_cred_.machine_name == c.machine_name) {
    return;
  }
  std::string machine = c.machine_name.substr(0, kMaxMachineName);
  if (machine.empty()) machine = "nfsgw";
  struct AUTH* auth = libnfs_authunix_create(machine.c_str(), c.uid, c.gid,
                                             static_cast<std::uint32_t>(c.gids.size()),
                                             c.gids.empty() ? nullptr : const_cast<std::uint32_t*>(c.gids.data()));
  if (auth == nullptr) return;  // out of memory: keep the old AUTH; caught below
  rpc_set_auth(rpc_, auth);
  auth_cred_ = c;
  auth_is_default_ = false;
}

void CallQueue::send_to_libnfs(std::unique_ptr<UpstreamCall> call) {
  apply_credentials(*call);
  if (call->cred && (auth_is_default_ || auth_cred_.uid != call->cred->uid ||
                     auth_cred_.gid != call->cred->gid)) {
    // Never let a call go out under someone else's identity.
    load_.fetch_sub(1, std::memory_order_relaxed);
    spdlog::error("upstream {} #{}: cannot build AUTH_SYS for {}", label_, index_, call->what);
    call->on_fail(nfs3::Status::ServerFault);
    return;
  }
  call->owner = this;
  call->seq = next_seq_++;
  in_flight_.emplace(call->seq, InFlight{Clock::now(), call.get()});
  UpstreamCall* raw = call.release();
  if (raw->queue(rpc_, &on_call_cb, raw) != 0) {
    std::unique_ptr<UpstreamCall> back(raw);
    in_flight_.erase(back->seq);
    load_.fetch_sub(1, std::memory_order_relaxed);
    spdlog::warn("upstream {} #{}: cannot queue {}: {}", label_, index_, back->what,
                 rpc_error_text(rpc_));
    back->on_fail(nfs3::Status::ServerFault);
  }
}

void CallQueue::on_call_cb(struct rpc_context*, int status, void* data, void* call_ptr) {
  std::unique_ptr<UpstreamCall> call(static_cast<UpstreamCall*>(call_ptr));
  auto* self = static_cast<CallQueue*>(call->owner);
  self->in_flight_.erase(call->seq);
  const char* message = status == RPC_STATUS_ERROR ? static_cast<const char*>(data) : nullptr;
  if (status == RPC_STATUS_SUCCESS ||
      classify_rpc_failure(status, message) != RpcFailure::ConnectionLost) {
    self->answered_();  // the origin answered something: it is alive
  }
  if (call->abandoned) {
    // Answered already (its caller went away); libnfs has just given it back.
    self->load_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  if (status == RPC_STATUS_SUCCESS) {
    self->load_.fetch_sub(1, std::memory_order_relaxed);
    try {
      call->on_reply(data);
    } catch (const std::exception& e) {
      spdlog::error("upstream {}: cannot copy {} reply: {}", self->label_, call->what, e.what());
      call->on_fail(nfs3::Status::ServerFault);
    }
    return;
  }
  // The statuses below are nfsgw's, not answers of the origin's NFS service:
  // on_fail marks the result gateway_status, so no cache keeps it.
  switch (classify_rpc_failure(status, message)) {
    case RpcFailure::ConnectionLost:
      self->lost_.push_back(std::move(call));  // handed to the pool once libnfs returns
      return;
    case RpcFailure::Denied:
      self->load_.fetch_sub(1, std::memory_order_relaxed);
      spdlog::warn("upstream {}: {} denied by the origin ({}): credentials rejected",
                   self->label_, call->what, message);
      call->on_fail(nfs3::Status::Acces);
      return;
    case RpcFailure::BadReply:
      self->load_.fetch_sub(1, std::memory_order_relaxed);
      spdlog::warn("upstream {}: {} failed at the RPC level: {}", self->label_, call->what,
                   message);
      call->on_fail(nfs3::Status::ServerFault);
      return;
  }
}

void CallQueue::abandon_calls_of_gone_callers() {
  // Calls inside libnfs stay there (4.0 cannot take one back) until their reply or
  // the connection's end; only their callers are answered now. Calls not yet
  // handed to libnfs go entirely.
  for (auto& [seq, f] : in_flight_) {
    if (!f.call->abandoned && f.call->caller_left()) f.call->abandon();
  }
  std::size_t kept = 0;
  for (auto& c : unsent_) {
    if (c->caller_left()) {
      load_.fetch_sub(1, std::memory_order_relaxed);
      c->abandon();
      c.reset();
    } else {
      unsent_[kept++] = std::move(c);
    }
  }
  unsent_.resize(kept);
}

CallQueue::Calls CallQueue::take_lost() {
  Calls lost = std::move(lost_);
  lost_.clear();
  load_.fetch_sub(static_cast<int>(lost.size()), std::memory_order_relaxed);
  return lost;
}

CallQueue::Calls CallQueue::take_unsent() {
  Calls back;
  back.reserve(unsent_.size());
  for (auto& c : unsent_) back.push_back(std::move(c));
  unsent_.clear();
  load_.fetch_sub(static_cast<int>(back.size()), std::memory_order_relaxed);
  return back;
}

}  // namespace nfsgw::upstream
