#include "gateway/rpc/duplicate_cache.h"

#include <algorithm>
#include <utility>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/byte_codec.h"
#include "cache/crc32c.h"

namespace nfsgw::rpc {

class DuplicateCache::Pending {
 public:
  using Waiter = std::function<void(Reply)>;

  /// Registers `w`; false when the reply is already there (then call result()).
  bool add(Waiter w) {
    std::lock_guard lock(mu_);
    if (done_) return false;
    waiters_.push_back(std::move(w));
    return true;
  }
  Reply result() const {
    std::lock_guard lock(mu_);
    return result_;
  }
  void complete(const Reply& reply) {
    std::vector<Waiter> waiting;
    {
      std::lock_guard lock(mu_);
      done_ = true;
      result_ = reply;
      waiting.swap(waiters_);
    }
    for (auto& w : waiting) w(reply);
  }

 private:
  mutable std::mutex mu_;
  bool done_ = false;
  Reply result_;
  std::vector<Waiter> waiters_;
};

struct DuplicateCache::Entry {
  std::shared_ptr<Pending> pending;  // while in flight
  bool finished = false;
  Reply reply;
  cache::Millis expires = 0;
};


std::string duplicate_key(const CallIdentity& call) {
  // Like knfsd, the checksum covers the first bytes of the arguments (handles,
  // names, offsets: what tells two calls apart) and the length the rest: a 1 MiB
  // WRITE is not read twice.
  constexpr std::size_t kChecksummed = 256;
  const std::size_t summed = std::min(call.args.size(), kChecksummed);
  std::string k = call.client;
  k.push_back('\0');
  cache::codec::Out out(k);
  for (std::uint32_t v : {call.xid, call.prog, call.vers, call.proc, call.uid, call.gid,
                          static_cast<std::uint32_t>(call.args.size()),
                          cache::crc32c(0, call.args.data(), summed)})
    out.u32(v);
  return k;
}

DuplicateCache::DuplicateCache(DuplicateCacheOptions options, const cache::Clock& clock)
    : options_(options), clock_(clock) {}

DuplicateCache::~DuplicateCache() = default;

void DuplicateCache::drop_expired(cache::Millis now) {
  while (!finished_.empty()) {
    auto it = entries_.find(finished_.front());
    if (it != entries_.end() && it->second->expires > now) break;
    if (it != entries_.end()) entries_.erase(it);
    finished_.pop_front();
  }
}

bool DuplicateCache::make_room() {
  while (entries_.size() >= options_.max_entries && !finished_.empty()) {
    entries_.erase(finished_.front());
    finished_.pop_front();
  }
  return entries_.size() < options_.max_entries;
}

DuplicateCache::Seen DuplicateCache::begin(const CallIdentity& call) {
  Seen seen;
  std::string key = duplicate_key(call);
  std::lock_guard lock(mu_);
  drop_expired(clock_.now_ms());
  if (auto it = entries_.find(key); it != entries_.end()) {
    Entry& e = *it->second;
    if (e.finished) {
      ++replayed_;
      seen.kind = Seen::Kind::Replay;
      seen.reply = e.reply;
    } else {
      ++waited_;
      seen.kind = Seen::Kind::InFlight;
      seen.pending = e.pending;
    }
    return seen;
  }
  if (options_.max_entries == 0 || !make_room()) return seen;  // Untracked
  auto e = std::make_unique<Entry>();
  e->pending = std::make_shared<Pending>();
  entries_.emplace(key, std::move(e));
  seen.kind = Seen::Kind::First;
  seen.key = std::move(key);
  return seen;
}

void DuplicateCache::finish(const std::string& key, const Reply& reply, bool keep) {
  std::shared_ptr<Pending> pending;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second->finished) return;
    Entry& e = *it->second;
    pending = std::move(e.pending);
    if (!keep || reply.empty()) {
      entries_.erase(it);
    } else {
      e.finished = true;
      e.reply = reply;
      e.expires = clock_.now_ms() + options_.keep.count();
      finished_.push_back(key);
    }
  }
  if (pending) pending->complete(reply);
}

Awaitable<Reply> DuplicateCache::wait(std::shared_ptr<Pending> pending) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(Reply)>(
      [](auto handler, std::shared_ptr<Pending> p) {
        auto ex = boost::asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto deliver = [h, ex](Reply r) {
          boost::asio::post(ex, [h, r = std::move(r)]() mutable { std::move (*h)(std::move(r)); });
        };
        if (!p->add(deliver)) deliver(p->result());
      },
      boost::asio::use_awaitable, std::move(pending));
}

DuplicateCacheCounts DuplicateCache::counts() const {
  std::lock_guard lock(mu_);
  return {replayed_, waited_, entries_.size()};
}

}  // namespace nfsgw::rpc
