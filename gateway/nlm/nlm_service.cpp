// NlmService (nlm_service.h): NLM v4 requests checked, kept in the LockTable and
// carried to the origin's lock manager.
#include "gateway/nlm/nlm_service.h"

#include <algorithm>
#include <utility>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "gateway/fan_out.h"

namespace nfsgw::nlm {

/// A file with locks or waiters: what the origin calls need.
struct NlmService::FileInfo {
  std::uint32_t export_id = 0;
  nfs3::FileHandle origin_fh;
  OriginLocks* origin = nullptr;
  Credentials cred;  // the last locker's, for releases nfsgw makes itself
};

/// A waiter's LOCK, as the client sent it.
struct NlmService::WaiterInfo {
  WaiterId id = 0;
  FileKey key;
  std::shared_ptr<FileInfo> file;
  OwnerId owner = 0;
  Range range;
  bool exclusive = false;
  Credentials cred;
  std::string client_address;
  nlm4::LockArgs args;
  bool in_flight = false;  // being asked for at the origin now
};

/// A request past its handle check.
struct NlmService::Entered {
  FileKey key;
  std::shared_ptr<FileInfo> file;
  Credentials cred;
  ClientOwner owner;
  Range range;
};

namespace {

bool fits(const LockTable& t, std::size_t reserved, std::ptrdiff_t delta) {
  return delta <= 0 || t.lock_count() + reserved + static_cast<std::size_t>(delta) <= t.limits().max_locks;
}

/// A request of a client host in progress, for ClientMonitor (unhold at the end).
class MonitorHold {
 public:
  MonitorHold(ClientMonitor& m, std::string name) : m_(m), name_(std::move(name)) {}
  ~MonitorHold() { m_.unhold(name_); }
  MonitorHold(const MonitorHold&) = delete;
  MonitorHold& operator=(const MonitorHold&) = delete;

 private:
  ClientMonitor& m_;
  std::string name_;
};

}  // namespace

NlmService::NlmService(HandleCheck check, OriginFor origins, NlmSettings settings, Now now)
    : check_(std::move(check)),
      origins_(std::move(origins)),
      settings_(std::move(settings)),
      now_(std::move(now)),
      owners_(settings_.instance, settings_.max_owners),
      table_(settings_.limits) {}

NlmService::~NlmService() = default;

void NlmService::begin_grace() {
  std::lock_guard lock(mu_);
  grace_.begin(now_(), settings_.grace);
}

NlmCounts NlmService::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}
std::size_t NlmService::lock_count() const {
  std::lock_guard lock(mu_);
  return table_.lock_count();
}
std::size_t NlmService::waiter_count() const {
  std::lock_guard lock(mu_);
  return table_.waiter_count();
}
std::size_t NlmService::owner_count() const {
  std::lock_guard lock(mu_);
  return owners_.size();
}

Awaitable<std::optional<NlmService::Entered>> NlmService::enter(const CallContext& ctx, const nlm4::Lock& lock,
                                                                 nlm4::Stat& refusal) {
  CheckedHandle h = co_await check_(ctx, lock.fh);
  if (h.verdict != nlm4::Stat::Granted) {
    refusal = h.verdict;
    std::lock_guard g(mu_);
    if (h.verdict == nlm4::Stat::StaleFh) ++counts_.stale;
    co_return std::nullopt;
  }
  OriginLocks* origin = origins_ ? origins_(h.export_id) : nullptr;
  if (origin == nullptr) {
    // An export whose origin has no lock manager configured.
    refusal = nlm4::Stat::DeniedNoLocks;
    co_return std::nullopt;
  }
  Entered e;
  e.key = file_key(h.export_id, h.origin);
  e.file = std::make_shared<FileInfo>(FileInfo{h.export_id, h.origin, origin, h.cred});
  e.cred = std::move(h.cred);
  e.owner = ClientOwner{ctx.client_address, lock.caller_name, lock.oh, lock.svid};
  e.range = Range::from_nlm(lock.offset, lock.length);
  co_return e;
}

nlm4::Lock NlmService::at_origin(const Entered& e, const nlm4::Lock& lock, OwnerId owner) const {
  return origin_lock(e.file->origin_fh, owners_.origin(owner), lock.offset, lock.length);
}

std::int32_t NlmService::own_state() const { return monitor_ != nullptr ? monitor_->state() : 0; }

Awaitable<OriginReply<nlm4::Res>> NlmService::lock_at_origin(OriginLocks& origin, const Credentials& cred,
                                                             nlm4::LockArgs args) const {
  args.state = own_state();
  return origin.lock(cred, std::move(args));
}

nlm4::Lock NlmService::origin_lock(const nfs3::FileHandle& fh, const std::optional<OriginOwner>& owner,
                                   std::uint64_t offset, std::uint64_t length) const {
  nlm4::Lock out;
  out.caller_name = settings_.caller_name;
  out.fh = fh;
  if (owner) {
    out.oh = owner->oh;
    out.svid = owner->svid;
  }
  out.offset = offset;
  out.length = length;
  return out;
}

void NlmService::tidy_file(const FileKey& key) {
  if (table_.locks(key).empty() && table_.waiters(key).empty()) files_.erase(key);
}

void NlmService::tidy_owner(OwnerId owner) {
  if (table_.holds_anything(owner) || doubtful_.contains(owner)) return;
  if (auto b = busy_.find(owner); b != busy_.end() && b->second > 0) return;
  busy_.erase(owner);
  owners_.forget(owner);
}

Awaitable<std::optional<nlm4::TestRes>> NlmService::test(const CallContext& ctx, nlm4::TestArgs args) {
  nlm4::TestRes res;
  res.cookie = args.cookie;
  nlm4::Stat refusal = nlm4::Stat::Failed;
  std::optional<Entered> e = co_await enter(ctx, args.lock, refusal);
  if (!e) {
    res.stat = refusal;
    co_return res;
  }
  nlm4::Lock origin_lock;
  {
    std::lock_guard g(mu_);
    if (const nlm4::Stat s = grace_.admit_test(now_()); s != nlm4::Stat::Granted) {
      res.stat = s;
      co_return res;
    }
    const std::optional<OwnerId> owner = owners_.find(e->owner);
    // Another client of nfsgw holds a conflicting lock: answered here.
    if (auto held = table_.test(e->key, owner.value_or(0), e->range, args.exclusive)) {
      const ClientOwner* holder = owners_.client(held->owner);
      res.stat = nlm4::Stat::Denied;
      res.holder.exclusive = held->exclusive;
      res.holder.svid = holder ? holder->svid : 0;
      res.holder.oh = holder ? holder->oh : nlm4::Netobj{};
      res.holder.offset = held->range.nlm_offset();
      res.holder.length = held->range.nlm_length();
      ++counts_.denied_local;
      co_return res;
    }
    origin_lock = at_origin(*e, args.lock, owner.value_or(0));
    if (!owner) {
      // An owner nfsgw does not know holds nothing at the origin: any lock of
      // nfsgw's there conflicts with it, so a name no owner has is asked with.
      const std::string oh = "nfsgw/" + owners_.instance() + "/test";
      origin_lock.oh.assign(oh.begin(), oh.end());
      origin_lock.svid = 0;
    }
    ++counts_.origin_calls;
  }
  nlm4::TestArgs to{args.cookie, args.exclusive, origin_lock};
  OriginReply<nlm4::TestRes> r = co_await e->file->origin->test(e->cred, std::move(to));
  std::lock_guard g(mu_);
  if (r.outcome != Outcome::Answered) {
    if (r.outcome == Outcome::Unreachable) {
      spdlog::warn("NLM TEST from {}: origin lock manager unreachable: {}", ctx.client_address, r.error);
      res.stat = nlm4::Stat::DeniedNoLocks;
      co_return res;
    }
    ++counts_.no_answer;
    co_return std::nullopt;
  }
  res.stat = r.reply->stat;
  if (res.stat == nlm4::Stat::Denied) {
    res.holder = r.reply->holder;
    // A holder that is one of nfsgw's own owners is named as its client names it.
    if (auto id = owners_.find(OriginOwner{res.holder.oh, res.holder.svid})) {
      if (const ClientOwner* c = owners_.client(*id)) {
        res.holder.oh = c->oh;
        res.holder.svid = c->svid;
      }
    }
  }
  co_return res;
}

Awaitable<std::optional<nlm4::Res>> NlmService::lock(const CallContext& ctx, nlm4::LockArgs args, bool monitor) {
  nlm4::Res res;
  res.cookie = args.cookie;
  nlm4::Stat refusal = nlm4::Stat::Failed;
  std::optional<Entered> e = co_await enter(ctx, args.lock, refusal);
  if (!e) {
    res.stat = refusal;
    co_return res;
  }
  if (reclaim_marks_.load(std::memory_order_acquire) != 0) {  // no frame, no lock on the usual path
    Awaitable<bool> reclaimed = wait_for_reclaim(e->key);
    if (!co_await std::move(reclaimed)) co_return std::nullopt;
  }
  // The client's host is monitored before anything of it reaches the origin (and
  // is not unmonitored while this request runs: `held`).
  std::optional<MonitorHold> held;
  bool admitted = false;  // by the grace period, when the request arrived
  if (monitor_ != nullptr && monitor) {
    {
      std::lock_guard g(mu_);
      if (const nlm4::Stat s = grace_.admit_lock(args.reclaim, now_()); s != nlm4::Stat::Granted) {
        res.stat = s;
        co_return res;
      }
      admitted = true;  // a reclaim whose SM_MON outlasts the grace period still counts
    }
    std::string my_name = my_name_for_ ? my_name_for_(ctx.client_address) : std::string();
    if (my_name.empty()) my_name = settings_.caller_name;
    // Bound to names first: no temporary inside co_await (GCC 12 freed one twice).
    MonitoredHost host{args.lock.caller_name, ctx.client_address, std::move(my_name)};
    Awaitable<bool> hold = monitor_->hold(std::move(host));
    if (!co_await std::move(hold)) {
      std::lock_guard g(mu_);
      ++counts_.not_monitored;
      res.stat = nlm4::Stat::DeniedNoLocks;
      co_return res;
    }
    held.emplace(*monitor_, args.lock.caller_name);
  }
  OwnerId owner = 0;
  std::size_t reserve = 0;
  nlm4::LockArgs to;
  // Queues the request as a waiter (under mu_): BLOCKED, or DENIED_NOLOCKS past the bound.
  auto queue = [&]() -> nlm4::Stat {
    const std::optional<WaiterId> w = table_.add_waiter(e->key, owner, e->range, args.exclusive);
    if (!w) return nlm4::Stat::DeniedNoLocks;
    auto& info = waiter_info_[*w];
    if (!info) info = std::make_shared<WaiterInfo>();
    info->id = *w;
    info->key = e->key;
    info->file = files_.try_emplace(e->key, e->file).first->second;
    info->owner = owner;
    info->range = e->range;
    info->exclusive = args.exclusive;
    info->cred = e->cred;
    info->client_address = ctx.client_address;
    info->args = args;
    ++counts_.blocked;
    return nlm4::Stat::Blocked;
  };
  {
    std::lock_guard g(mu_);
    if (const nlm4::Stat s = admitted ? nlm4::Stat::Granted : grace_.admit_lock(args.reclaim, now_());
        s != nlm4::Stat::Granted) {
      res.stat = s;
      co_return res;
    }
    const std::optional<OwnerId> id = owners_.acquire(e->owner);
    if (!id) {
      res.stat = nlm4::Stat::DeniedNoLocks;
      co_return res;
    }
    owner = *id;
    const std::optional<std::ptrdiff_t> delta = table_.lock_delta(e->key, owner, e->range, args.exclusive);
    if (!delta) {
      ++counts_.denied_local;
      res.stat = args.block ? queue() : nlm4::Stat::Denied;
      tidy_owner(owner);
      co_return res;
    }
    if (!fits(table_, reserved_, *delta)) {
      res.stat = nlm4::Stat::DeniedNoLocks;
      tidy_owner(owner);
      co_return res;
    }
    reserve = static_cast<std::size_t>(std::max<std::ptrdiff_t>(*delta, 0));
    reserved_ += reserve;
    ++busy_[owner];
    ++counts_.origin_calls;
    // A client's reclaim (nfsgw restarted) is a new lock at the origin: the origin
    // dropped nfsgw's old locks when told of the restart and is in no grace period
    // of its own (it would refuse a reclaim, NLM4_DENIED_GRACE_PERIOD).
    to = nlm4::LockArgs{args.cookie, false, args.exclusive, at_origin(*e, args.lock, owner), false, 0};
  }
  const nlm4::LockArgs again = to;
  Awaitable<OriginReply<nlm4::Res>> first = lock_at_origin(*e->file->origin, e->cred, std::move(to));
  OriginReply<nlm4::Res> r = co_await std::move(first);
  // A reclaim the origin refuses during nfsgw's grace period: most likely because
  // of nfsgw's own lock from before the restart, which the origin drops once its
  // statd has called it back (told of the restart moments before the client was).
  // Asked again, bounded: the client would otherwise lose the lock.
  for (int i = 0; args.reclaim && i < settings_.reclaim_retries && r.outcome == Outcome::Answered &&
                  r.reply->stat == nlm4::Stat::Denied;
       ++i) {
    {
      std::lock_guard g(mu_);
      if (!grace_.active(now_())) break;
      ++counts_.origin_calls;
      ++counts_.reclaims_retried;
    }
    boost::asio::steady_timer pause(co_await boost::asio::this_coro::executor, settings_.reclaim_retry_delay);
    co_await pause.async_wait(boost::asio::use_awaitable);
    Awaitable<OriginReply<nlm4::Res>> retry = lock_at_origin(*e->file->origin, e->cred, again);
    r = co_await std::move(retry);
  }
  bool undo = false;  // granted at the origin, and the table could not take it
  {
    std::lock_guard g(mu_);
    reserved_ -= reserve;
    --busy_[owner];
    if (r.outcome != Outcome::Answered) {
      if (r.outcome == Outcome::NoAnswer) {
        // The origin may have granted it: the owner is kept for its UNLOCK.
        doubtful_.insert(owner);
        ++counts_.no_answer;
        co_return std::nullopt;
      }
      spdlog::warn("NLM LOCK from {}: origin lock manager unreachable: {}", ctx.client_address, r.error);
      tidy_owner(owner);
      res.stat = nlm4::Stat::DeniedNoLocks;
      co_return res;
    }
    res.stat = r.reply->stat;
    if (res.stat == nlm4::Stat::Granted) {
      const nlm4::Stat t = table_.lock(e->key, owner, e->range, args.exclusive);
      if (t == nlm4::Stat::Granted) {
        files_.try_emplace(e->key, e->file).first->second->cred = e->cred;
        // Its own waiter for this lock (a retransmission, or the client's retry
        // after BLOCKED) is done, and a lock granted from a waiter is claimed.
        for (const Waiter& w : table_.waiters(e->key)) {
          if (w.owner == owner && w.range == e->range && w.exclusive == args.exclusive) {
            table_.drop_waiter(w.id);
            waiter_info_.erase(w.id);
          }
        }
        unclaimed_.erase(Unclaimed{e->key, owner, e->range, args.exclusive});
        ++counts_.granted;
      } else {
        // Only while another lock's release is between the origin and the table.
        spdlog::warn("NLM LOCK from {}: granted by the origin but the lock table refused it ({}); released again",
                     ctx.client_address, nlm4::name(t));
        undo = true;
        ++busy_[owner];
        res.stat = t == nlm4::Stat::DeniedNoLocks ? t : nlm4::Stat::Denied;
      }
    } else if (res.stat == nlm4::Stat::Denied || res.stat == nlm4::Stat::Blocked) {
      ++counts_.denied_origin;
      res.stat = args.block ? queue() : nlm4::Stat::Denied;
      tidy_owner(owner);
    } else {
      tidy_owner(owner);
    }
  }
  if (undo) {
    // What the owner held in that range before is taken again after the release.
    std::vector<HeldLock> before;
    {
      std::lock_guard g(mu_);
      for (const HeldLock& h : table_.locks_of(e->key, owner))
        if (h.range.overlaps(e->range)) before.push_back(h);
    }
    co_await release_at_origin(*e->file, owner, e->range, e->cred);
    for (const HeldLock& h : before) {
      nlm4::LockArgs again;
      again.exclusive = h.exclusive;
      {
        std::lock_guard g(mu_);
        again.lock = at_origin(*e, args.lock, owner);
      }
      again.lock.offset = h.range.nlm_offset();
      again.lock.length = h.range.nlm_length();
      Awaitable<OriginReply<nlm4::Res>> restore = lock_at_origin(*e->file->origin, e->cred, std::move(again));
      co_await std::move(restore);
    }
    std::lock_guard g(mu_);
    --busy_[owner];
    tidy_owner(owner);
    co_return res;
  }
  if (res.stat == nlm4::Stat::Granted && on_granted_) on_granted_(e->file->export_id, e->file->origin_fh);
  co_return res;
}

Awaitable<bool> NlmService::release_at_origin(const FileInfo& f, OwnerId owner, Range range,
                                              const Credentials& cred) {
  nlm4::UnlockArgs u;
  {
    std::lock_guard g(mu_);
    const std::optional<OriginOwner> o = owners_.origin(owner);
    if (!o) co_return false;
    u.lock = origin_lock(f.origin_fh, o, range.nlm_offset(), range.nlm_length());
    ++counts_.origin_calls;
  }
  OriginReply<nlm4::Res> r = co_await f.origin->unlock(cred, std::move(u));
  if (r.outcome != Outcome::Answered) {
    spdlog::warn("NLM: releasing a lock at the origin failed: {}", r.error.empty() ? "no answer" : r.error);
    co_return false;
  }
  co_return true;
}

Awaitable<std::optional<nlm4::Res>> NlmService::unlock(const CallContext& ctx, nlm4::UnlockArgs args) {
  nlm4::Res res;
  res.cookie = args.cookie;
  nlm4::Stat refusal = nlm4::Stat::Failed;
  std::optional<Entered> e = co_await enter(ctx, args.lock, refusal);
  if (!e) {
    res.stat = refusal;
    co_return res;
  }
  if (reclaim_marks_.load(std::memory_order_acquire) != 0) {  // no frame, no lock on the usual path
    Awaitable<bool> reclaimed = wait_for_reclaim(e->key);
    if (!co_await std::move(reclaimed)) co_return std::nullopt;
  }
  // What was written under the lock reaches the origin before the lock is let go
  // there (design.md, issue 21, item 10).
  if (before_release_) {
    // The awaitable bound to a name first: no temporary inside co_await (GCC 12).
    Awaitable<bool> flush = before_release_(e->file->export_id, e->file->origin_fh);
    if (!co_await std::move(flush)) {
      std::lock_guard g(mu_);
      ++counts_.no_answer;
      co_return std::nullopt;
    }
  }
  OwnerId owner = 0;
  std::size_t reserve = 0;
  nlm4::UnlockArgs to;
  {
    std::lock_guard g(mu_);
    (void)grace_.admit_release(now_());
    const std::optional<OwnerId> id = owners_.find(e->owner);
    if (!id) {
      // An owner nfsgw does not know holds nothing at the origin through nfsgw.
      res.stat = nlm4::Stat::Granted;
      co_return res;
    }
    owner = *id;
    const std::ptrdiff_t delta = table_.unlock_delta(e->key, owner, e->range);
    if (!fits(table_, reserved_, delta)) {
      // The split it needs would pass max_locks: nothing changes, here or at the origin.
      res.stat = nlm4::Stat::DeniedNoLocks;
      co_return res;
    }
    reserve = static_cast<std::size_t>(std::max<std::ptrdiff_t>(delta, 0));
    reserved_ += reserve;
    ++busy_[owner];
    ++counts_.origin_calls;
    to = nlm4::UnlockArgs{args.cookie, at_origin(*e, args.lock, owner)};
  }
  OriginReply<nlm4::Res> r = co_await e->file->origin->unlock(e->cred, std::move(to));
  {
    std::lock_guard g(mu_);
    reserved_ -= reserve;
    --busy_[owner];
    if (r.outcome != Outcome::Answered) {
      // Whether or not it was sent: the lock is still held as far as nfsgw knows,
      // and the client's retransmission asks again.
      ++counts_.no_answer;
      tidy_owner(owner);
      co_return std::nullopt;
    }
    res.stat = r.reply->stat;
    if (res.stat == nlm4::Stat::Granted) {
      table_.unlock(e->key, owner, e->range);  // fits: checked above, with its room kept
      std::erase_if(unclaimed_, [&](const auto& entry) {
        const Unclaimed& u = entry.first;
        return u.file == e->key && u.owner == owner && u.range.overlaps(e->range);
      });
      if (e->range == Range{}) doubtful_.erase(owner);
    }
    tidy_owner(owner);
    tidy_file(e->key);
  }
  co_await wake(e->key);
  co_return res;
}

Awaitable<std::optional<nlm4::Res>> NlmService::cancel(const CallContext& ctx, nlm4::CancelArgs args) {
  nlm4::Res res;
  res.cookie = args.cookie;
  nlm4::Stat refusal = nlm4::Stat::Failed;
  std::optional<Entered> e = co_await enter(ctx, args.lock, refusal);
  if (!e) {
    res.stat = refusal;
    co_return res;
  }
  if (reclaim_marks_.load(std::memory_order_acquire) != 0) {  // no frame, no lock on the usual path
    Awaitable<bool> reclaimed = wait_for_reclaim(e->key);
    if (!co_await std::move(reclaimed)) co_return std::nullopt;
  }
  OwnerId owner = 0;
  std::shared_ptr<FileInfo> file;
  {
    std::lock_guard g(mu_);
    const std::optional<OwnerId> id = owners_.find(e->owner);
    if (!id) {
      res.stat = nlm4::Stat::Denied;  // nothing of this owner waits
      co_return res;
    }
    owner = *id;
    for (const Waiter& w : table_.waiters(e->key)) {
      if (w.owner == owner && w.range == e->range && w.exclusive == args.exclusive) {
        table_.drop_waiter(w.id);
        waiter_info_.erase(w.id);
        tidy_owner(owner);
        tidy_file(e->key);
        res.stat = nlm4::Stat::Granted;
        co_return res;
      }
    }
    // Granted from its waiter before the client heard of it: the client no
    // longer wants it, so it is released.
    const Unclaimed u{e->key, owner, e->range, args.exclusive};
    if (!unclaimed_.contains(u)) {
      res.stat = nlm4::Stat::Denied;
      co_return res;
    }
    unclaimed_.erase(u);
    ++busy_[owner];
    auto f = files_.find(e->key);
    file = f != files_.end() ? f->second : e->file;
  }
  const bool released = co_await release_at_origin(*file, owner, e->range, e->cred);
  {
    std::lock_guard g(mu_);
    --busy_[owner];
    if (!released) {
      unclaimed_.try_emplace(Unclaimed{e->key, owner, e->range, args.exclusive}, now_());
      ++counts_.no_answer;
      co_return std::nullopt;
    }
    table_.unlock(e->key, owner, e->range);  // a range it held whole: no split
    tidy_owner(owner);
    tidy_file(e->key);
  }
  co_await wake(e->key);
  res.stat = nlm4::Stat::Granted;
  co_return res;
}

nlm4::Res NlmService::granted(const CallContext& ctx, const nlm4::TestArgs& args) {
  spdlog::info("NLM GRANTED from {}: nfsgw asks its origin for no blocking lock; answered DENIED",
               ctx.client_address);
  return nlm4::Res{args.cookie, nlm4::Stat::Denied};
}

Awaitable<void> NlmService::free_all(const CallContext& ctx, nlm4::Notify args) {
  // Only the owners of the host that says it rebooted: from its own address.
  // Arguments bound to names first: no temporaries inside co_await (GCC 12 freed
  // such a std::function's captured string twice).
  std::string address = ctx.client_address;
  std::function<bool(const ClientOwner&)> which = [address](const ClientOwner& c) { return c.address == address; };
  std::string why = "FREE_ALL from " + address;
  Awaitable<std::size_t> release = release_owners(std::move(args.name), std::move(which), std::move(why));
  co_await std::move(release);
}

Awaitable<void> NlmService::host_rebooted(nsm::Status st) {
  {
    std::lock_guard g(mu_);
    ++counts_.reboots;
  }
  spdlog::info("NLM: statd says client host {} rebooted (state {})", st.mon_name, st.state);
  std::function<bool(const ClientOwner&)> which = [](const ClientOwner&) { return true; };
  std::string why = "statd: " + st.mon_name + " rebooted";
  Awaitable<std::size_t> release = release_owners(std::move(st.mon_name), std::move(which), std::move(why));
  co_await std::move(release);
}

Awaitable<std::size_t> NlmService::sweep_monitors() {
  if (monitor_ == nullptr) co_return 0;
  std::vector<std::string> names;
  {
    std::lock_guard g(mu_);
    const std::set<std::string> in_use = owners_.caller_names();
    names = monitor_->take_unused([&in_use](const std::string& n) { return in_use.contains(n); });
  }
  const std::size_t n = names.size();
  Awaitable<void> unmonitor = monitor_->unmonitor(std::move(names));
  co_await std::move(unmonitor);
  co_return n;
}

Awaitable<std::size_t> NlmService::release_owners(std::string caller_name,
                                                  std::function<bool(const ClientOwner&)> which, std::string why) {
  struct Release {
    std::shared_ptr<FileInfo> file;
    FileKey key;
    OwnerId owner = 0;
    Range range;
  };
  std::vector<Release> releases;
  std::vector<OwnerId> owners;
  {
    std::lock_guard g(mu_);
    for (OwnerId id : owners_.owners_of(caller_name)) {
      const ClientOwner* c = owners_.client(id);
      if (c == nullptr || !which(*c)) continue;
      LockTable::Released r = table_.release_owner(id);
      for (const Waiter& w : r.waiters) waiter_info_.erase(w.id);
      for (auto& [key, held] : r.locks) {
        auto f = files_.find(key);
        if (f != files_.end()) releases.push_back({f->second, key, id, held.range});
      }
      std::erase_if(unclaimed_, [id](const auto& entry) { return entry.first.owner == id; });
      ++busy_[id];
      owners.push_back(id);
    }
  }
  std::set<FileKey> files;
  for (const Release& r : releases) {
    // What the gone host wrote under its lock reaches the origin before the next
    // owner can have it there, as for its own UNLOCK (design.md item 10). Its
    // locks go even when the origin does not take the data now: a rebooted host
    // will not ask again, and the data stays in nfsgw, flushed later.
    if (before_release_ && !files.contains(r.key)) {
      Awaitable<bool> flush = before_release_(r.file->export_id, r.file->origin_fh);
      if (!co_await std::move(flush))
        spdlog::warn("NLM {}: a file's unflushed writes could not reach the origin before its locks were "
                     "released there (flushed later by the write-back)",
                     why);
    }
    files.insert(r.key);
    co_await release_at_origin(*r.file, r.owner, r.range, r.file->cred);
  }
  {
    std::lock_guard g(mu_);
    for (OwnerId id : owners) {
      --busy_[id];
      doubtful_.erase(id);
      tidy_owner(id);
    }
    for (const Release& r : releases) tidy_file(r.key);
  }
  if (!owners.empty())
    spdlog::info("NLM {} ({}): {} owners, {} locks released", why, caller_name, owners.size(), releases.size());
  for (const FileKey& f : files) co_await wake(f);
  co_return releases.size();
}

Awaitable<std::size_t> NlmService::wake(FileKey file) {
  std::size_t granted = 0;
  std::vector<std::shared_ptr<WaiterInfo>> asking;
  {
    std::lock_guard g(mu_);
    if (reclaiming_.contains(file)) co_return 0;  // the retry timer comes back to it
    for (WaiterId id : table_.ready_waiters(file)) {
      auto it = waiter_info_.find(id);
      if (it == waiter_info_.end() || it->second->in_flight) continue;
      it->second->in_flight = true;
      ++busy_[it->second->owner];
      ++counts_.origin_calls;
      asking.push_back(it->second);
    }
  }
  for (const auto& w : asking) {
    nlm4::LockArgs to;
    to.cookie = w->args.cookie;
    to.block = false;
    to.exclusive = w->exclusive;
    {
      std::lock_guard g(mu_);
      const std::optional<OriginOwner> o = owners_.origin(w->owner);
      to.lock = origin_lock(w->file->origin_fh, o, w->args.lock.offset, w->args.lock.length);
    }
    Awaitable<OriginReply<nlm4::Res>> ask = lock_at_origin(*w->file->origin, w->cred, std::move(to));
    OriginReply<nlm4::Res> r = co_await std::move(ask);
    bool release = false;
    bool tell = false;
    {
      std::lock_guard g(mu_);
      w->in_flight = false;
      --busy_[w->owner];
      const bool got = r.outcome == Outcome::Answered && r.reply->stat == nlm4::Stat::Granted;
      if (r.outcome == Outcome::NoAnswer) doubtful_.insert(w->owner);
      if (got) {
        const bool queued = waiter_info_.contains(w->id) && table_.waiter(w->id) != nullptr;
        if (queued && table_.grant_waiter(w->id) == nlm4::Stat::Granted) {
          waiter_info_.erase(w->id);
          unclaimed_.insert_or_assign(Unclaimed{w->key, w->owner, w->range, w->exclusive}, now_());
          w->file->cred = w->cred;
          ++counts_.waiters_granted;
          ++counts_.granted;
          ++granted;
          tell = true;
        } else {
          release = true;  // cancelled meanwhile, or no longer fits
          ++busy_[w->owner];
        }
      }
      if (!release) tidy_owner(w->owner);
    }
    if (release) {
      co_await release_at_origin(*w->file, w->owner, w->range, w->cred);
      std::lock_guard g(mu_);
      --busy_[w->owner];
      tidy_owner(w->owner);
      tidy_file(w->key);
    }
    if (tell) {
      if (on_granted_) on_granted_(w->file->export_id, w->file->origin_fh);
      co_await tell_granted(*w);
    }
  }
  co_return granted;
}

Awaitable<void> NlmService::tell_granted(WaiterInfo w) {
  if (callbacks_ == nullptr) co_return;
  nlm4::TestArgs g{w.args.cookie, w.exclusive, w.args.lock};
  g.lock.caller_name = settings_.caller_name;  // the server's name, as lockd sends it
  Awaitable<bool> call = callbacks_->granted(w.client_address, std::move(g));
  const bool taken = co_await std::move(call);
  std::lock_guard lock(mu_);
  if (taken) {
    unclaimed_.erase(Unclaimed{w.key, w.owner, w.range, w.exclusive});
    ++counts_.grants_told;
  } else {
    ++counts_.grants_untold;
  }
}

Awaitable<std::size_t> NlmService::drop_unclaimed() {
  std::vector<std::pair<Unclaimed, std::shared_ptr<FileInfo>>> expired;
  {
    std::lock_guard g(mu_);
    const Clock::time_point now = now_();
    for (auto it = unclaimed_.begin(); it != unclaimed_.end();) {
      auto f = files_.find(it->first.file);
      if (now - it->second < settings_.unclaimed_timeout || f == files_.end() ||
          reclaiming_.contains(it->first.file)) {
        ++it;
        continue;
      }
      ++busy_[it->first.owner];
      expired.emplace_back(it->first, f->second);
      it = unclaimed_.erase(it);
    }
  }
  std::size_t dropped = 0;
  for (const auto& [u, file] : expired) {
    Awaitable<bool> release = release_at_origin(*file, u.owner, u.range, file->cred);
    const bool released = co_await std::move(release);
    {
      std::lock_guard g(mu_);
      --busy_[u.owner];
      if (released) {
        table_.unlock(u.file, u.owner, u.range);  // a range it held whole: no split
        ++counts_.unclaimed_dropped;
        ++dropped;
        const ClientOwner* c = owners_.client(u.owner);
        spdlog::warn("NLM: a lock granted to a waiter of {} was not claimed within {} s (NLM_GRANTED not "
                     "taken, no retry of the LOCK): its client is taken to have gone; released",
                     c ? c->caller_name : std::string("an owner"),
                     std::chrono::duration_cast<std::chrono::seconds>(settings_.unclaimed_timeout).count());
      } else {
        unclaimed_.try_emplace(u, now_());  // asked again at the next round
      }
      tidy_owner(u.owner);
      tidy_file(u.file);
    }
    if (released) {
      Awaitable<std::size_t> woken = wake(u.file);
      co_await std::move(woken);
    }
  }
  co_return dropped;
}

Awaitable<std::size_t> NlmService::retry_waiters() {
  Awaitable<std::size_t> drop = drop_unclaimed();
  co_await std::move(drop);
  std::set<FileKey> files;
  {
    std::lock_guard g(mu_);
    for (const auto& [id, w] : waiter_info_) files.insert(w->key);
  }
  std::size_t granted = 0;
  for (const FileKey& f : files) granted += co_await wake(f);
  Awaitable<std::size_t> sweep = sweep_monitors();
  co_await std::move(sweep);
  co_return granted;
}


// --- The origin restarted (design.md, issue 21, item 9) ---

/// The files of one reclaim stay marked until it ends, however it ends.
class NlmService::ReclaimMark {
 public:
  ReclaimMark(std::mutex& mu, std::multiset<FileKey>& marks, std::atomic<std::size_t>& count, FileKey key)
      : mu_(mu), marks_(marks), count_(count), key_(std::move(key)) {}
  ~ReclaimMark() {
    std::lock_guard g(mu_);
    if (auto it = marks_.find(key_); it != marks_.end()) {
      marks_.erase(it);
      count_.fetch_sub(1, std::memory_order_release);
    }
  }
  ReclaimMark(const ReclaimMark&) = delete;
  ReclaimMark& operator=(const ReclaimMark&) = delete;

 private:
  std::mutex& mu_;
  std::multiset<FileKey>& marks_;
  std::atomic<std::size_t>& count_;
  FileKey key_;
};

namespace {

/// Whether a reclaim the origin answered `s` is settled: the origin granted it, or
/// gave the range to another owner, or no longer knows the file. DENIED_NOLOCKS
/// (the origin short of room, or its statd not yet up) and DENIED_GRACE_PERIOD are
/// asked again.
bool settled(nlm4::Stat s) {
  return s != nlm4::Stat::DeniedNoLocks && s != nlm4::Stat::DeniedGracePeriod;
}

Awaitable<void> pause_for(std::chrono::steady_clock::duration d) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, d);
  co_await t.async_wait(boost::asio::use_awaitable);
}

}  // namespace

Awaitable<bool> NlmService::wait_for_reclaim(FileKey key) {
  const Clock::time_point until = now_() + settings_.origin_reclaim_window + std::chrono::seconds(10);
  for (;;) {
    {
      std::lock_guard g(mu_);
      if (!reclaiming_.contains(key)) co_return true;
      if (now_() >= until) co_return false;  // no reply: the client asks again
    }
    Awaitable<void> pause = pause_for(std::chrono::milliseconds(20));
    co_await std::move(pause);
  }
}

Awaitable<OriginReclaim> NlmService::origin_restarted(std::set<std::uint32_t> exports, std::string origin) {
  std::vector<FileKey> keys;
  {
    std::lock_guard g(mu_);
    ++counts_.origin_restarts;
    for (const auto& [key, f] : files_) {
      if (exports.contains(f->export_id) && !table_.locks(key).empty()) keys.push_back(key);
    }
    // Marked at once: from now on a client's request on these files waits for
    // their reclaim, and no waiter of theirs is asked for at the origin.
    for (const FileKey& k : keys) reclaiming_.insert(k);
    reclaim_marks_.fetch_add(keys.size(), std::memory_order_release);
  }
  spdlog::warn("NLM: origin {} restarted: taking the locks of {} files again there", origin, keys.size());
  std::vector<OriginReclaim> per(keys.size());
  std::vector<std::unique_ptr<ReclaimMark>> marks;
  for (const FileKey& k : keys) marks.push_back(std::make_unique<ReclaimMark>(mu_, reclaiming_, reclaim_marks_, k));
  FanOutWork work = [this, &keys, &per, &marks](std::size_t i) -> Awaitable<void> {
    return reclaim_file(keys[i], per[i], std::move(marks[i]));
  };
  FanOutError failed = [origin](std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      spdlog::error("NLM: reclaim at origin {} failed: {}", origin, x.what());
    }
  };
  const boost::asio::any_io_executor ex = co_await boost::asio::this_coro::executor;
  Awaitable<void> all = fan_out(ex, keys.size(), settings_.origin_reclaim_parallel, std::move(work), std::move(failed));
  co_await std::move(all);
  OriginReclaim report;
  for (const OriginReclaim& r : per) {
    report.locks += r.locks;
    report.reclaimed += r.reclaimed;
    report.retaken += r.retaken;
    report.refused += r.refused;
    report.unanswered += r.unanswered;
  }
  {
    std::lock_guard g(mu_);
    counts_.origin_reclaimed += report.reclaimed + report.retaken;
    counts_.origin_reclaims_lost += report.refused + report.unanswered;
  }
  auto log = report.refused + report.unanswered == 0 ? spdlog::level::info : spdlog::level::err;
  spdlog::log(log,
              "NLM: origin {} restarted: {} locks, {} reclaimed in its grace period, {} taken again as new locks, "
              "{} refused, {} unanswered",
              origin, report.locks, report.reclaimed, report.retaken, report.refused, report.unanswered);
  co_return report;
}

Awaitable<void> NlmService::reclaim_file(FileKey key, OriginReclaim& report, std::unique_ptr<ReclaimMark> mark) {
  // Calls of this file's owners already at the origin end first (bounded): a
  // reclaim must not race an UNLOCK sent before the file was marked.
  const Clock::time_point drained = now_() + std::chrono::seconds(5);
  for (;;) {
    {
      std::lock_guard g(mu_);
      bool busy = false;
      for (const HeldLock& h : table_.locks(key)) {
        auto b = busy_.find(h.owner);
        busy = busy || (b != busy_.end() && b->second > 0);
      }
      if (!busy || now_() >= drained) break;
    }
    Awaitable<void> pause = pause_for(std::chrono::milliseconds(10));
    co_await std::move(pause);
  }
  struct Item {
    HeldLock held;
    nlm4::LockArgs args;
    std::string client;  // for the log: caller name and svid
  };
  std::shared_ptr<FileInfo> file;
  std::vector<Item> items;
  {
    std::lock_guard g(mu_);
    auto f = files_.find(key);
    if (f == files_.end()) co_return;
    file = f->second;
    for (const HeldLock& h : table_.locks(key)) {
      const std::optional<OriginOwner> o = owners_.origin(h.owner);
      if (!o) continue;
      Item it;
      it.held = h;
      it.args.exclusive = h.exclusive;
      it.args.reclaim = true;
      it.args.lock = origin_lock(file->origin_fh, o, h.range.nlm_offset(), h.range.nlm_length());
      const ClientOwner* c = owners_.client(h.owner);
      it.client = c ? c->caller_name + " svid " + std::to_string(c->svid) : "an owner";
      ++busy_[h.owner];
      items.push_back(std::move(it));
    }
  }
  report.locks += items.size();
  for (Item& it : items) {
    const Clock::time_point give_up = now_() + settings_.origin_reclaim_window;
    std::chrono::steady_clock::duration delay = settings_.reclaim_retry_delay;
    std::string outcome;
    for (;;) {
      {
        std::lock_guard g(mu_);
        ++counts_.origin_calls;
      }
      Awaitable<OriginReply<nlm4::Res>> call = lock_at_origin(*file->origin, file->cred, it.args);
      const OriginReply<nlm4::Res> r = co_await std::move(call);
      if (r.outcome == Outcome::Answered) {
        const nlm4::Stat s = r.reply->stat;
        if (s == nlm4::Stat::Granted) {
          // Released meanwhile (its client host rebooted: statd's callbacks for
          // it and for the origin can come together)? Then let it go again.
          bool still = false;
          {
            std::lock_guard g(mu_);
            for (const HeldLock& h : table_.locks_of(key, it.held.owner)) still = still || h == it.held;
          }
          if (!still) {
            Awaitable<bool> undo = release_at_origin(*file, it.held.owner, it.held.range, file->cred);
            co_await std::move(undo);
            break;
          }
          ++(it.args.reclaim ? report.reclaimed : report.retaken);
          if (!it.args.reclaim)
            spdlog::warn("NLM: {}'s lock taken again at the restarted origin as a new lock (it kept no grace "
                         "period): held again, though another owner could have held it meanwhile",
                         it.client);
          break;
        }
        if (s == nlm4::Stat::DeniedGracePeriod && it.args.reclaim) {
          it.args.reclaim = false;  // the origin's grace period is over: a new lock
          continue;
        }
        if (settled(s)) {
          ++report.refused;
          outcome = std::string("answered ") + nlm4::name(s);
          break;
        }
        it.args.reclaim = true;
      }
      if (now_() >= give_up) {
        ++report.unanswered;
        outcome = r.outcome == Outcome::Answered ? std::string("still answered ") + nlm4::name(r.reply->stat)
                                                 : (r.error.empty() ? std::string("no answer") : r.error);
        break;
      }
      Awaitable<void> pause = pause_for(delay);
      co_await std::move(pause);
      delay = std::min<std::chrono::steady_clock::duration>(delay * 2, std::chrono::seconds(2));
    }
    if (!outcome.empty()) {
      // NLM cannot take a lock back from a client: it keeps it in the table (so
      // nfsgw's other clients are still kept out), and the operator is told.
      spdlog::error("NLM: {}'s lock [{}, +{}) was NOT taken again at the restarted origin ({}): the client "
                    "believes it holds it, the origin does not",
                    it.client, it.held.range.nlm_offset(), it.held.range.nlm_length(), outcome);
    }
  }
  std::lock_guard g(mu_);
  for (const Item& it : items) {
    --busy_[it.held.owner];
    tidy_owner(it.held.owner);
  }
  (void)mark;  // released at the end of this coroutine: the file's requests go on
}

}  // namespace nfsgw::nlm
