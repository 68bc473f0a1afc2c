// ShareService (share_service.h): SHARE and UNSHARE carried to the origin.
#include "gateway/nlm/share_service.h"

#include <spdlog/spdlog.h>

namespace nfsgw::nlm {

namespace share_service_cpp {

/// UNSHARE of the whole reservation: every access and deny bit.
nlm4::ShareArgs release_args(const std::string& caller_name, const nfs3::FileHandle& origin, const OriginOwner& owner,
                             nlm4::Netobj cookie) {
  nlm4::ShareArgs a;
  a.cookie = std::move(cookie);
  a.share.caller_name = caller_name;
  a.share.fh = origin;
  a.share.oh = owner.oh;
  a.share.mode = nlm4::ShareMode::DenyReadWrite;
  a.share.access = nlm4::ShareAccess::ReadWrite;
  return a;
}

nlm4::ShareRes answer(const nlm4::Netobj& cookie, nlm4::Stat stat) { return nlm4::ShareRes{cookie, stat, 0}; }

}  // namespace share_service_cpp

using namespace share_service_cpp;

ShareService::ShareService(HandleCheck check, OriginFor origins, ShareSettings settings, Now now)
    : check_(std::move(check)),
      origins_(std::move(origins)),
      settings_(std::move(settings)),
      now_(std::move(now)),
      owners_(settings_.instance + "-s", settings_.max_shares) {}

void ShareService::begin_grace() {
  std::lock_guard lock(mu_);
  grace_.begin(now_(), settings_.grace);
}

void ShareService::tidy_owner(OwnerId owner) {
  if (busy_.contains(owner)) return;
  for (const auto& [key, held] : held_)
    if (key.second == owner) return;
  owners_.forget(owner);
}

Awaitable<CheckedHandle> ShareService::checked(const CallContext& ctx, const nfs3::FileHandle& fh) {
  // Bound to a name first: no temporary inside co_await (GCC 12).
  Awaitable<CheckedHandle> checking = check_(ctx, fh);
  CheckedHandle h = co_await std::move(checking);
  if (h.verdict == nlm4::Stat::StaleFh) {
    std::lock_guard lock(mu_);
    ++counts_.stale;
  }
  co_return h;
}

Awaitable<std::optional<nlm4::ShareRes>> ShareService::share(const CallContext& ctx, nlm4::ShareArgs args) {
  Awaitable<CheckedHandle> checking = checked(ctx, args.share.fh);
  const CheckedHandle h = co_await std::move(checking);
  if (h.verdict != nlm4::Stat::Granted) co_return answer(args.cookie, h.verdict);
  OriginLocks* origin = origins_ ? origins_(h.export_id) : nullptr;
  const Key key{file_key(h.export_id, h.origin), 0};
  OwnerId id = 0;
  OriginOwner at_origin;
  bool fresh = false;
  {
    std::lock_guard lock(mu_);
    if (const nlm4::Stat s = grace_.admit_lock(args.reclaim, now_()); s != nlm4::Stat::Granted) {
      co_return answer(args.cookie, s);
    }
    if (origin == nullptr) co_return answer(args.cookie, nlm4::Stat::DeniedNoLocks);
    const std::optional<OwnerId> acquired =
        owners_.acquire(ClientOwner{ctx.client_address, args.share.caller_name, args.share.oh, 0});
    if (!acquired) {
      ++counts_.over_bound;
      co_return answer(args.cookie, nlm4::Stat::DeniedNoLocks);
    }
    id = *acquired;
    fresh = !held_.contains(Key{key.first, id});
    if (fresh && held_.size() + reserved_ >= settings_.max_shares) {
      ++counts_.over_bound;
      tidy_owner(id);
      co_return answer(args.cookie, nlm4::Stat::DeniedNoLocks);
    }
    if (fresh) ++reserved_;
    ++busy_[id];
    ++counts_.origin_calls;
    at_origin = *owners_.origin(id);
  }
  // A reclaim is a new reservation at the origin, which keeps no grace period for nfsgw.
  nlm4::ShareArgs to{args.cookie,
                     nlm4::Share{settings_.caller_name, h.origin, at_origin.oh, args.share.mode, args.share.access},
                     false};
  Awaitable<OriginReply<nlm4::ShareRes>> asking = origin->share(h.cred, std::move(to));
  const OriginReply<nlm4::ShareRes> r = co_await std::move(asking);

  std::lock_guard lock(mu_);
  if (fresh) --reserved_;
  if (--busy_[id] == 0) busy_.erase(id);
  const bool granted = r.outcome == Outcome::Answered && r.reply->stat == nlm4::Stat::Granted;
  // Unanswered: the origin may hold it; kept, so that a release reaches the origin.
  if (granted || r.outcome == Outcome::NoAnswer) {
    Held& kept = held_.try_emplace(Key{key.first, id}, Held{h.export_id, h.origin, h.cred, args.share.caller_name})
                     .first->second;
    kept.mode = args.share.mode;  // the latest granted (the origin keeps one per owner and file)
    kept.access = args.share.access;
  }
  switch (r.outcome) {
    case Outcome::NoAnswer:
      ++counts_.no_answer;
      spdlog::warn("NLM SHARE from {}: the origin did not answer ({}); no reply, the client asks again",
                   ctx.client_address, r.error);
      co_return std::nullopt;
    case Outcome::Unreachable:
      spdlog::warn("NLM SHARE from {}: the origin's lock manager cannot be reached ({})", ctx.client_address,
                   r.error);
      tidy_owner(id);
      co_return answer(args.cookie, nlm4::Stat::DeniedNoLocks);
    case Outcome::Answered: break;
  }
  ++(granted ? counts_.granted : counts_.denied);
  tidy_owner(id);
  co_return nlm4::ShareRes{args.cookie, r.reply->stat, r.reply->sequence};
}

Awaitable<std::optional<nlm4::ShareRes>> ShareService::unshare(const CallContext& ctx, nlm4::ShareArgs args) {
  Awaitable<CheckedHandle> checking = checked(ctx, args.share.fh);
  const CheckedHandle h = co_await std::move(checking);
  if (h.verdict != nlm4::Stat::Granted) co_return answer(args.cookie, h.verdict);
  Key key{file_key(h.export_id, h.origin), 0};
  Held held;
  OriginOwner at_origin;
  OriginLocks* origin = nullptr;
  {
    std::lock_guard lock(mu_);
    (void)grace_.admit_release(now_());
    const std::optional<OwnerId> id =
        owners_.find(ClientOwner{ctx.client_address, args.share.caller_name, args.share.oh, 0});
    if (id) key.second = *id;
    auto it = id ? held_.find(key) : held_.end();
    // Nothing held through nfsgw: nothing to release at the origin.
    if (it == held_.end()) co_return answer(args.cookie, nlm4::Stat::Granted);
    held = it->second;
    origin = origins_ ? origins_(held.export_id) : nullptr;
    if (origin == nullptr) co_return answer(args.cookie, nlm4::Stat::DeniedNoLocks);
    ++busy_[key.second];
    ++counts_.origin_calls;
    at_origin = *owners_.origin(key.second);
  }
  Awaitable<OriginReply<nlm4::ShareRes>> asking =
      origin->unshare(h.cred, release_args(settings_.caller_name, held.origin, at_origin, args.cookie));
  const OriginReply<nlm4::ShareRes> r = co_await std::move(asking);

  std::lock_guard lock(mu_);
  if (--busy_[key.second] == 0) busy_.erase(key.second);
  if (r.outcome == Outcome::Answered) {
    held_.erase(key);
    ++counts_.released;
  }
  tidy_owner(key.second);
  if (r.outcome == Outcome::NoAnswer) {
    ++counts_.no_answer;
    co_return std::nullopt;
  }
  if (r.outcome == Outcome::Unreachable) co_return answer(args.cookie, nlm4::Stat::DeniedNoLocks);
  co_return nlm4::ShareRes{args.cookie, r.reply->stat, r.reply->sequence};
}

std::vector<ShareService::Taken> ShareService::take(const std::function<bool(OwnerId, const Held&)>& which) {
  std::vector<Taken> out;
  std::lock_guard lock(mu_);
  for (const auto& [key, held] : held_) {
    if (!which(key.second, held)) continue;
    out.push_back(Taken{key, held, *owners_.origin(key.second)});
    ++busy_[key.second];
  }
  return out;
}

Awaitable<std::size_t> ShareService::release_owners(std::function<bool(const ClientOwner&)> which, std::string why) {
  // (`take` calls the lambda under mu_.)
  std::vector<Taken> todo = take([&](OwnerId id, const Held&) {
    const ClientOwner* co = owners_.client(id);
    return co != nullptr && which(*co);
  });
  std::size_t released = 0;
  for (Taken& r : todo) {
    OriginLocks* origin = origins_ ? origins_(r.held.export_id) : nullptr;
    bool done = false;
    std::string error = "no lock manager for the export";
    if (origin != nullptr) {
      Awaitable<OriginReply<nlm4::ShareRes>> asking =
          origin->unshare(r.held.cred, release_args(settings_.caller_name, r.held.origin, r.at_origin, {}));
      const OriginReply<nlm4::ShareRes> reply = co_await std::move(asking);
      done = reply.outcome == Outcome::Answered;
      error = reply.error;
    }
    std::lock_guard lock(mu_);
    if (--busy_[r.key.second] == 0) busy_.erase(r.key.second);
    if (done) {
      held_.erase(r.key);
      ++counts_.released;
      ++released;
    } else {
      spdlog::warn("NLM: a share reservation of {} not released at the origin ({}): {}; kept for a later release",
                   r.held.caller_name, why, error);
    }
    tidy_owner(r.key.second);
  }
  if (!todo.empty())
    spdlog::info("NLM: {} of {} share reservations released at the origin ({})", released, todo.size(), why);
  co_return released;
}

Awaitable<std::size_t> ShareService::free_all(const CallContext& ctx, nlm4::Notify args) {
  // Plain captures: GCC 12 miscompiles init-captures in coroutine bodies.
  const std::string address = ctx.client_address, name = args.name;
  Awaitable<std::size_t> releasing = release_owners(
      [address, name](const ClientOwner& o) { return o.caller_name == name && o.address == address; },
      "FREE_ALL of " + args.name);
  co_return co_await std::move(releasing);
}

Awaitable<std::size_t> ShareService::host_rebooted(std::string caller_name) {
  Awaitable<std::size_t> releasing = release_owners(
      [caller_name](const ClientOwner& o) { return o.caller_name == caller_name; }, caller_name + " rebooted");
  co_return co_await std::move(releasing);
}

Awaitable<std::size_t> ShareService::origin_restarted(std::set<std::uint32_t> exports) {
  std::vector<Taken> todo = take([&](OwnerId, const Held& held) { return exports.contains(held.export_id); });
  std::size_t again = 0;
  for (Taken& a : todo) {
    OriginLocks* origin = origins_ ? origins_(a.held.export_id) : nullptr;
    std::optional<nlm4::Stat> stat;
    std::string error = "no lock manager for the export";
    for (bool reclaim : {true, false}) {
      if (origin == nullptr) break;
      nlm4::ShareArgs to{{},
                         nlm4::Share{settings_.caller_name, a.held.origin, a.at_origin.oh, a.held.mode, a.held.access},
                         reclaim};
      Awaitable<OriginReply<nlm4::ShareRes>> asking = origin->share(a.held.cred, std::move(to));
      const OriginReply<nlm4::ShareRes> r = co_await std::move(asking);
      if (r.outcome != Outcome::Answered) {
        error = r.error;
        break;
      }
      stat = r.reply->stat;
      // Past its grace period the origin takes no reclaim: a new reservation then.
      if (*stat != nlm4::Stat::DeniedGracePeriod || !reclaim) break;
    }
    std::lock_guard lock(mu_);
    if (--busy_[a.key.second] == 0) busy_.erase(a.key.second);
    if (stat == nlm4::Stat::Granted) {
      ++again;
    } else if (stat) {
      spdlog::error("NLM: the share reservation of {} was NOT taken again at the restarted origin ({}): lost",
                    a.held.caller_name, nlm4::name(*stat));
      held_.erase(a.key);
      ++counts_.lost;
    } else {
      // Kept: UNSHARE, FREE_ALL or the host's reboot still reach the origin.
      spdlog::warn("NLM: the share reservation of {} not asked again at the restarted origin: {}",
                   a.held.caller_name, error);
    }
    tidy_owner(a.key.second);
  }
  if (!todo.empty())
    spdlog::info("NLM: {} of {} share reservations held again at the restarted origin", again, todo.size());
  co_return again;
}

std::size_t ShareService::share_count() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

std::size_t ShareService::owner_count() const {
  std::lock_guard lock(mu_);
  return owners_.size();
}

ShareCounts ShareService::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace nfsgw::nlm
