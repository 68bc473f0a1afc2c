#include "gateway/app/lock_service.h"

#include <atomic>
#include <chrono>

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "gateway/translator/handle_translator.h"

namespace nfsgw {

namespace asio = boost::asio;

namespace {

/// The NLM status for a handle the translator refused.
nlm4::Stat verdict(nfs3::Status s) {
  switch (s) {
    case nfs3::Status::Ok: return nlm4::Stat::Granted;
    case nfs3::Status::Acces:
    case nfs3::Status::Perm: return nlm4::Stat::Denied;
    case nfs3::Status::ServerFault: return nlm4::Stat::Failed;
    default: return nlm4::Stat::StaleFh;  // BadHandle, Stale
  }
}

/// This run of nfsgw, told apart from the one before a restart (OwnerMap).
std::string instance_name() {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return std::to_string(s.count());
}

/// nfsgw's caller name at the origins: this host's name, which the origin's statd
/// can resolve and monitor.
std::string caller_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace

LockService::LockService(asio::io_context& io, const config::Config& cfg, HandleTranslator& translator,
                         std::function<void(std::uint32_t, const nfs3::FileHandle&)> forget_attributes,
                         const OriginLocksFactory& make_origin, OriginLocksStop stop_origin)
    : io_(io), strand_(asio::make_strand(io)), timer_(strand_), interval_(cfg.server.nlm_retry_interval) {
  stop_origin_ = std::move(stop_origin);
  nlm::NlmSettings s;
  s.limits.max_locks = cfg.server.nlm_max_locks;
  s.limits.max_waiters = cfg.server.nlm_max_waiters;
  s.max_owners = cfg.server.nlm_max_owners;
  s.grace = cfg.server.nlm_grace;
  s.retry_interval = cfg.server.nlm_retry_interval;
  s.instance = instance_name();
  s.caller_name = caller_name();
  for (const auto& e : cfg.exports) {
    if (auto o = make_origin(e, s.caller_name)) origins_[e.id] = std::move(o);
  }
  auto check = [&translator](const CallContext& ctx, const nfs3::FileHandle& fh) -> Awaitable<nlm::CheckedHandle> {
    HandleTranslator::CheckedHandle c = co_await translator.check_handle(ctx, fh);
    nlm::CheckedHandle out;
    out.verdict = verdict(c.status);
    out.export_id = c.export_id;
    out.origin = c.origin;
    out.cred = std::move(c.cred);
    co_return out;
  };
  auto origin_for = [this](std::uint32_t id) -> nlm::OriginLocks* {
    auto it = origins_.find(id);
    return it == origins_.end() ? nullptr : it->second.get();
  };
  service_ = std::make_unique<nlm::NlmService>(check, origin_for, s, [] { return std::chrono::steady_clock::now(); });
  service_->on_granted(std::move(forget_attributes));
  spdlog::info("NLM: lock service for {} exports (caller name {} at the origins, grace {} ms, waiters retried every {} ms)",
               origins_.size(), s.caller_name, cfg.server.nlm_grace.count(), interval_.count());
}

LockService::~LockService() = default;

void LockService::start() {
  service_->begin_grace();
  asio::post(strand_, [this] { arm(); });
}

void LockService::arm() {  // on strand_
  timer_.expires_after(interval_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    asio::co_spawn(
        io_,
        [this]() -> Awaitable<void> {
          try {
            co_await service_->retry_waiters();
          } catch (const std::exception& e) {
            spdlog::warn("NLM: asking the origin for waiters failed: {}", e.what());
          }
          asio::post(strand_, [this] {
            if (!stopped_) arm();
          });
        },
        asio::detached);
  });
}

void LockService::stop() {
  stopped_ = true;
  asio::post(strand_, [this] { timer_.cancel(); });
  if (stop_origin_)
    for (auto& [id, o] : origins_) stop_origin_(*o);
}

}  // namespace nfsgw
