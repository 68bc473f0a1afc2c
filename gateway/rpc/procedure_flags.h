// What kind of call a procedure is, as flags in the dispatch tables and in each
// call's CallContext. Header-only and free of Asio, so that the upstream forwarder
// can use it too.
#pragma once

#include <cstdint>

namespace nfsgw::rpc::flags {

constexpr std::uint32_t Mutates = 0x1;     // changes the file system (refused on "ro")
constexpr std::uint32_t Idempotent = 0x2;  // safe to repeat (retried upstream)

}  // namespace nfsgw::rpc::flags
