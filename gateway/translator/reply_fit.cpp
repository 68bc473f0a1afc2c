#include "gateway/translator/reply_fit.h"

#include "gateway/made_up.h"
#include "protocol/nfs3_sizes.h"

namespace nfsgw {
namespace {

template <typename Res>
std::size_t fit(Res& res, std::uint32_t limit) {
  if (res.status != nfs3::Status::Ok) return 0;
  std::size_t size = nfs3::encoded_size(res);
  if (size <= limit) return 0;
  const std::size_t before = res.entries.size();
  while (!res.entries.empty() && size > limit) {
    size -= nfs3::encoded_size(res.entries.back());
    res.entries.pop_back();
  }
  const std::size_t dropped = before - res.entries.size();
  if (res.entries.empty()) {
    // Not one entry fits (or not even the reply around them): the client must ask
    // with a larger maxcount.
    Res small = made_up<Res>(nfs3::Status::TooSmall);
    small.dir_attributes = std::move(res.dir_attributes);
    res = std::move(small);
    return dropped;
  }
  if (dropped > 0) res.eof = false;
  return dropped;
}

}  // namespace

std::size_t fit_reply(nfs3::ReaddirRes& res, std::uint32_t limit) { return fit(res, limit); }
std::size_t fit_reply(nfs3::ReaddirplusRes& res, std::uint32_t limit) { return fit(res, limit); }

}  // namespace nfsgw
