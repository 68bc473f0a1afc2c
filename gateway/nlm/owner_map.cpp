// OwnerMap: numbered origin owners (owner_map.h).
#include "gateway/nlm/owner_map.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <stdexcept>

namespace nfsgw::nlm {

namespace {

/// Ids are svids: positive int32 values.
constexpr OwnerId kMaxId = 0x7FFFFFFF;

void mix(std::size_t& h, std::size_t v) { h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2); }

}  // namespace

std::size_t OwnerMap::KeyHash::operator()(const ClientOwner& o) const {
  std::size_t h = std::hash<std::string>{}(o.address);
  mix(h, std::hash<std::string>{}(o.caller_name));
  mix(h, std::hash<std::string_view>{}(
             std::string_view(reinterpret_cast<const char*>(o.oh.data()), o.oh.size())));
  mix(h, std::hash<std::int32_t>{}(o.svid));
  return h;
}

OwnerMap::OwnerMap(std::string instance, std::size_t max_owners)
    : instance_(std::move(instance)), max_owners_(std::min<std::size_t>(max_owners, kMaxId)) {
  const bool printable = std::all_of(instance_.begin(), instance_.end(),
                                     [](char c) { return c > ' ' && c < 0x7F && c != '/'; });
  if (instance_.empty() || instance_.size() > 64 || !printable) {
    throw std::invalid_argument("nlm owner map: the instance must be 1..64 printable bytes without '/'");
  }
}

std::optional<OwnerId> OwnerMap::acquire(const ClientOwner& owner) {
  if (auto it = by_owner_.find(owner); it != by_owner_.end()) return it->second;
  if (by_id_.size() >= max_owners_) return std::nullopt;
  // The next free id after the last one given: ids are reused only after a
  // wrap-around, so a forgotten owner's id is not given again at once.
  while (by_id_.contains(next_)) next_ = next_ == kMaxId ? 1 : next_ + 1;
  const OwnerId id = next_;
  next_ = next_ == kMaxId ? 1 : next_ + 1;
  by_owner_.emplace(owner, id);
  by_id_.emplace(id, owner);
  return id;
}

std::optional<OwnerId> OwnerMap::find(const ClientOwner& owner) const {
  if (auto it = by_owner_.find(owner); it != by_owner_.end()) return it->second;
  return std::nullopt;
}

std::optional<OwnerId> OwnerMap::find(const OriginOwner& owner) const {
  const std::optional<OwnerId> id = parse_origin_handle(owner.oh);
  if (!id || static_cast<std::int64_t>(*id) != owner.svid || !by_id_.contains(*id)) return std::nullopt;
  return id;
}

const ClientOwner* OwnerMap::client(OwnerId id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

std::optional<OriginOwner> OwnerMap::origin(OwnerId id) const {
  if (!by_id_.contains(id)) return std::nullopt;
  return OriginOwner{origin_handle(id), static_cast<std::int32_t>(id)};
}

std::vector<OwnerId> OwnerMap::owners_of(std::string_view caller_name) const {
  std::vector<OwnerId> out;
  for (const auto& [id, owner] : by_id_) {
    if (owner.caller_name == caller_name) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> OwnerMap::caller_names() const {
  std::set<std::string> out;
  for (const auto& [id, owner] : by_id_) out.insert(owner.caller_name);
  return out;
}

void OwnerMap::forget(OwnerId id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  by_owner_.erase(it->second);
  by_id_.erase(it);
}

nlm4::Netobj OwnerMap::origin_handle(OwnerId id) const {
  const std::string s = "nfsgw/" + instance_ + "/" + std::to_string(id);
  return nlm4::Netobj(s.begin(), s.end());
}

std::optional<OwnerId> OwnerMap::parse_origin_handle(const nlm4::Netobj& oh) const {
  const std::string prefix = "nfsgw/" + instance_ + "/";
  const std::string_view s(reinterpret_cast<const char*>(oh.data()), oh.size());
  if (!s.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = s.substr(prefix.size());
  if (digits.empty() || digits.size() > 10 || digits.front() == '0') return std::nullopt;
  OwnerId id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size() || id == 0 || id > kMaxId) return std::nullopt;
  return id;
}

}  // namespace nfsgw::nlm
