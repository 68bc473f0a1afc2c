// Loopback ports reserved for the integration tests ("integ"), so that they never
// collide with the other engineers' origins and gateways on this shared machine.
#pragma once

#include <cstdint>

namespace integ {

constexpr std::uint16_t kOriginNfsPort = 25490;
constexpr std::uint16_t kOriginMountPort = 25048;
constexpr std::uint16_t kGatewayPort = 25049;
constexpr std::uint16_t kSecondGatewayPort = 25050;
/// An origin that is deliberately not running when nfsgw starts (origin_down_test).
constexpr std::uint16_t kLateOriginNfsPort = 25590;
constexpr std::uint16_t kLateOriginMountPort = 25148;

/// The wan-emu relay between a second nfsgw and the origin (errors_test).
constexpr std::uint16_t kRelayNfsPort = 25491;
constexpr std::uint16_t kRelayMountPort = 25047;
constexpr std::uint16_t kRelayControlPort = 25492;

}  // namespace integ
