// Loopback ports reserved for the integration tests ("integ"), so that they never
// collide with the other engineers' origins and gateways on this shared machine.
#pragma once

#include <cstdint>

namespace integ {

constexpr std::uint16_t kOriginNfsPort = 25490;
constexpr std::uint16_t kOriginMountPort = 25048;
constexpr std::uint16_t kGatewayPort = 25049;
constexpr std::uint16_t kSecondGatewayPort = 25050;
/// two_nodes_test: HAProxy in front of the gateways on kGatewayPort and kSecondGatewayPort.
constexpr std::uint16_t kBalancerPort = 25051;
/// An origin that is deliberately not running when nfsgw starts (origin_down_test).
constexpr std::uint16_t kLateOriginNfsPort = 25590;
constexpr std::uint16_t kLateOriginMountPort = 25148;

/// The wan-emu relay between a second nfsgw and the origin (errors_test).
constexpr std::uint16_t kRelayNfsPort = 25491;
constexpr std::uint16_t kRelayMountPort = 25047;
constexpr std::uint16_t kRelayControlPort = 25492;

/// wan_test: origin <- wan-emu relay <- nfsgw, apart from the ports above.
constexpr std::uint16_t kWanOriginNfsPort = 27000;
constexpr std::uint16_t kWanOriginMountPort = 27001;
constexpr std::uint16_t kWanRelayNfsPort = 27002;
constexpr std::uint16_t kWanRelayMountPort = 27003;
constexpr std::uint16_t kWanRelayControlPort = 27004;
constexpr std::uint16_t kWanGatewayPort = 27005;

/// rpcbind_test: an nfsgw that registers itself, and an origin that never runs.
constexpr std::uint16_t kRpcbindGatewayPort = 28049;
constexpr std::uint16_t kRpcbindAbsentOriginNfsPort = 28090;
constexpr std::uint16_t kRpcbindAbsentOriginMountPort = 28091;

/// metadata_cache_test: origin <- wan-emu relay <- nfsgw (metadata cache on), and a
/// second nfsgw for the tests that need their own [cache] settings or a second
/// node sharing the secret.
constexpr std::uint16_t kMetaOriginNfsPort = 29100;
constexpr std::uint16_t kMetaOriginMountPort = 29101;
constexpr std::uint16_t kMetaRelayNfsPort = 29102;
constexpr std::uint16_t kMetaRelayMountPort = 29103;
constexpr std::uint16_t kMetaRelayControlPort = 29104;
constexpr std::uint16_t kMetaGatewayPort = 29105;
constexpr std::uint16_t kMetaSecondGatewayPort = 29106;

/// data_cache_test: origin <- wan-emu relay (counts READ bytes) <- nfsgw (data cache on).
constexpr std::uint16_t kDataOriginNfsPort = 29200;
constexpr std::uint16_t kDataOriginMountPort = 29201;
constexpr std::uint16_t kDataRelayNfsPort = 29202;
constexpr std::uint16_t kDataRelayMountPort = 29203;
constexpr std::uint16_t kDataRelayControlPort = 29204;
constexpr std::uint16_t kDataGatewayPort = 29205;

/// frozen_origin_test: origin (frozen with SIGSTOP) <- wan-emu relay (counts what
/// reaches the origin) <- nfsgw with a short origin_timeout.
constexpr std::uint16_t kFrozenOriginNfsPort = 29400;
constexpr std::uint16_t kFrozenOriginMountPort = 29401;
constexpr std::uint16_t kFrozenRelayNfsPort = 29402;
constexpr std::uint16_t kFrozenRelayMountPort = 29403;
constexpr std::uint16_t kFrozenRelayControlPort = 29404;
constexpr std::uint16_t kFrozenGatewayPort = 29405;

/// hostile_input_test: origin <- wan-emu relay (counts what reaches the origin) <-
/// nfsgw with several exports.
constexpr std::uint16_t kHostileOriginNfsPort = 29300;
constexpr std::uint16_t kHostileOriginMountPort = 29301;
constexpr std::uint16_t kHostileRelayNfsPort = 29302;
constexpr std::uint16_t kHostileRelayMountPort = 29303;
constexpr std::uint16_t kHostileRelayControlPort = 29304;
constexpr std::uint16_t kHostileGatewayPort = 29305;

/// crash_test: origin <- nfsgw killed, stopped and starved of cache disk under load.
constexpr std::uint16_t kCrashOriginNfsPort = 29500;
constexpr std::uint16_t kCrashOriginMountPort = 29501;
constexpr std::uint16_t kCrashGatewayPort = 29502;
constexpr std::uint16_t kCrashSmallDiskGatewayPort = 29503;

/// reload_test: origin <- nfsgw whose configuration is reloaded under load.
constexpr std::uint16_t kReloadOriginNfsPort = 29600;
constexpr std::uint16_t kReloadOriginMountPort = 29601;
constexpr std::uint16_t kReloadGatewayPort = 29602;

/// metrics_test: origin <- nfsgw with its Prometheus endpoint, scraped with curl.
constexpr std::uint16_t kMetricsOriginNfsPort = 29700;
constexpr std::uint16_t kMetricsOriginMountPort = 29701;
constexpr std::uint16_t kMetricsGatewayPort = 29702;
constexpr std::uint16_t kMetricsEndpointPort = 29703;
constexpr std::uint16_t kMetricsSecondGatewayPort = 29704;

/// origin_faults_test: origin <- wan-emu relay (cut for 60 s) <- nfsgw under load;
/// the origin is also killed and restarted.
constexpr std::uint16_t kFaultsOriginNfsPort = 29760;
constexpr std::uint16_t kFaultsOriginMountPort = 29761;
constexpr std::uint16_t kFaultsRelayNfsPort = 29762;
constexpr std::uint16_t kFaultsRelayMountPort = 29763;
constexpr std::uint16_t kFaultsRelayControlPort = 29764;
constexpr std::uint16_t kFaultsGatewayPort = 29765;

/// warm_test: origin <- wan-emu relay (20 ms RTT, counts what reaches the origin) <-
/// nfsgw, warmed with `nfsgw warm`.
constexpr std::uint16_t kWarmOriginNfsPort = 29800;
constexpr std::uint16_t kWarmOriginMountPort = 29801;
constexpr std::uint16_t kWarmRelayNfsPort = 29802;
constexpr std::uint16_t kWarmRelayMountPort = 29803;
constexpr std::uint16_t kWarmRelayControlPort = 29804;
constexpr std::uint16_t kWarmGatewayPort = 29805;

}  // namespace integ
