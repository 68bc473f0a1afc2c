#include "gateway/upstream/upstream_pool.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace nfsgw::upstream {

UpstreamPool::UpstreamPool(boost::asio::io_context& io, Endpoint endpoint, unsigned connections,
                           UpstreamOptions options)
    : io_(io), endpoint_(std::move(endpoint)), count_(std::max(1u, connections)),
      options_(options) {}

UpstreamPool::~UpstreamPool() {
  for (auto& c : waiting_) c->on_fail(nfs3::Status::Jukebox);
}

void UpstreamPool::start() {
  std::vector<std::shared_ptr<UpstreamConnection>> to_start;
  {
    std::lock_guard lock(mu_);
    if (started_ || stopped_) return;
    started_ = true;
    for (unsigned i = 0; i < count_; ++i) {
      connections_.push_back(
          std::make_shared<UpstreamConnection>(io_, endpoint_, i, shared_from_this(), options_));
    }
    up_.assign(count_, false);
    to_start = connections_;
  }
  spdlog::info("upstream {}: starting {} connection(s)", endpoint_.label(), count_);
  for (auto& c : to_start) c->start();
}

void UpstreamPool::stop() {
  std::vector<std::shared_ptr<UpstreamConnection>> conns;
  std::deque<std::unique_ptr<UpstreamCall>> waiting;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    conns.swap(connections_);
    waiting.swap(waiting_);
    std::fill(up_.begin(), up_.end(), false);
  }
  for (auto& c : conns) c->stop();
  for (auto& c : waiting) c->on_fail(nfs3::Status::Jukebox);
}

std::size_t UpstreamPool::connections_up() const {
  std::lock_guard lock(mu_);
  return static_cast<std::size_t>(std::count(up_.begin(), up_.end(), true));
}

void UpstreamPool::submit(std::unique_ptr<UpstreamCall> call) {
  if (call->abandoned || call->caller_left()) {
    call->abandon();  // nobody waits for it any more: never sent, never queued
    return;
  }
  std::shared_ptr<UpstreamConnection> target;
  std::vector<std::unique_ptr<UpstreamCall>> gone;
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      // answered below, outside the lock
    } else {
      const std::size_t n = connections_.size();
      int best_load = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = (next_ + k) % n;
        if (!up_[i]) continue;
        const int load = connections_[i]->load();
        if (!target || load < best_load) {
          target = connections_[i];
          best_load = load;
        }
      }
      if (!target) {
        waiting_.push_back(std::move(call));
        // Amortised: the queue is swept each time it doubles, so calls of
        // callers that left cannot pile up while no connection is up.
        if (waiting_.size() >= sweep_waiting_at_) gone = take_abandoned_waiting();
      } else {
        next_ = (target->index() + 1) % n;
      }
    }
  }
  for (auto& c : gone) c->abandon();
  if (!call) return;  // waiting
  if (!target) {
    call->on_fail(nfs3::Status::Jukebox);
    return;
  }
  target->execute(std::move(call));
}

std::vector<std::unique_ptr<UpstreamCall>> UpstreamPool::take_abandoned_waiting() {
  std::vector<std::unique_ptr<UpstreamCall>> gone;
  std::deque<std::unique_ptr<UpstreamCall>> keep;
  for (auto& c : waiting_) {
    if (c->caller_left()) {
      gone.push_back(std::move(c));
    } else {
      keep.push_back(std::move(c));
    }
  }
  waiting_.swap(keep);
  sweep_waiting_at_ = std::max(kFirstWaitingSweep, 2 * waiting_.size());
  return gone;
}

void UpstreamPool::dispatch(std::vector<std::unique_ptr<UpstreamCall>> calls) {
  for (auto& c : calls) submit(std::move(c));
}

void UpstreamPool::connection_up(std::size_t index) {
  std::vector<std::unique_ptr<UpstreamCall>> ready;
  {
    std::lock_guard lock(mu_);
    if (stopped_ || index >= up_.size()) return;
    up_[index] = true;
    ready.reserve(waiting_.size());
    while (!waiting_.empty()) {
      ready.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
  }
  if (!ready.empty()) {
    spdlog::debug("upstream {}: sending {} waiting call(s)", endpoint_.label(), ready.size());
  }
  dispatch(std::move(ready));
}

void UpstreamPool::connection_down(std::size_t index) {
  std::lock_guard lock(mu_);
  if (index < up_.size()) up_[index] = false;
}

void UpstreamPool::calls_lost(std::vector<std::unique_ptr<UpstreamCall>> calls) {
  std::vector<std::unique_ptr<UpstreamCall>> resend;
  std::size_t jukebox = 0;
  std::size_t abandoned = 0;
  for (auto& c : calls) {
    if (c->caller_left()) {
      ++abandoned;  // whatever the origin did, nobody waits for the answer
      c->abandon();
    } else if (c->idempotent) {
      resend.push_back(std::move(c));
    } else {
      ++jukebox;
      c->on_fail(nfs3::Status::Jukebox);
    }
  }
  if (!calls.empty()) {
    spdlog::info("upstream {}: connection lost with {} call(s) in flight: {} re-sent, {} "
                 "answered JUKEBOX, {} abandoned (client gone)",
                 endpoint_.label(), calls.size(), resend.size(), jukebox, abandoned);
  }
  dispatch(std::move(resend));
}

void UpstreamPool::calls_bounced(std::vector<std::unique_ptr<UpstreamCall>> calls) {
  dispatch(std::move(calls));
}

}  // namespace nfsgw::upstream
