// The supplementary groups of an AUTH_SYS credential, kept inline: RFC 5531 allows
// at most 16, and a credential is copied on every call (the context, the squash
// rule, the keys of cached ACCESS answers), so it should not allocate.
#pragma once

#include <boost/container/static_vector.hpp>
#include <cstdint>

namespace nfsgw {

inline constexpr std::size_t kMaxAuthGroups = 16;
using AuthGroups = boost::container::static_vector<std::uint32_t, kMaxAuthGroups>;

}  // namespace nfsgw
