// Loopback ports of the integration tests ("integ"). Every test binary has a block
// of its own, so that ctest can run two of them at once and CI can run the suite
// against its sanitized nfsgw beside another run, and so that they never meet the
// other engineers' origins and gateways on this shared machine:
//
//   port = base + block * kPortBlockSize + slot
//
// base: $NFSGW_INTEG_PORT_BASE (default 12000: below the ephemeral range, 32768 and up, so that
// no outgoing connection holds one of them); block: $NFSGW_INTEG_PORT_BLOCK, which
// tests/integration/CMakeLists.txt sets per test (0 for a binary run by hand); slot:
// the port's place in the list below. A base and block that would leave the port
// range stop the test at once with a message saying so.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace integ {

constexpr unsigned kPortBlockSize = 100;
constexpr unsigned kDefaultPortBase = 12000;

/// The first port of the block that $NFSGW_INTEG_PORT_BASE (`base`) and
/// $NFSGW_INTEG_PORT_BLOCK (`block`) give (null or empty: the defaults), or why
/// they give none (`error` not empty). Pure, so that its refusals are tested
/// (tests/integration/ports_test.cpp); port() stops the test on one.
struct PortBlock {
  unsigned first = 0;
  std::string error;
};
inline PortBlock port_block(const char* base_text, const char* block_text) {
  PortBlock out;
  auto number = [&out](const char* name, const char* v, unsigned fallback) -> unsigned {
    if (v == nullptr || *v == '\0') return fallback;
    char* end = nullptr;
    errno = 0;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n > 65535) {
      if (out.error.empty()) out.error = std::string(name) + "=" + v + ": not a number from 0 to 65535";
      return 0;
    }
    return static_cast<unsigned>(n);
  };
  const unsigned base = number("NFSGW_INTEG_PORT_BASE", base_text, kDefaultPortBase);
  const unsigned block = number("NFSGW_INTEG_PORT_BLOCK", block_text, 0);
  if (!out.error.empty()) return out;
  const unsigned long first_port = base + static_cast<unsigned long>(block) * kPortBlockSize;
  if (base < 1024 || first_port + kPortBlockSize > 65536) {
    out.error = "NFSGW_INTEG_PORT_BASE=" + std::to_string(base) + ", NFSGW_INTEG_PORT_BLOCK=" +
                std::to_string(block) + ": the block must lie in 1024-65535";
    return out;
  }
  out.first = static_cast<unsigned>(first_port);
  return out;
}

/// The port of this slot in this process's block (see above).
inline std::uint16_t port(unsigned slot) {
  static const unsigned first = [] {
    const PortBlock b = port_block(std::getenv("NFSGW_INTEG_PORT_BASE"), std::getenv("NFSGW_INTEG_PORT_BLOCK"));
    if (!b.error.empty()) {
      std::fprintf(stderr, "%s\n", b.error.c_str());
      std::abort();
    }
    return b.first;
  }();
  if (slot >= kPortBlockSize) {
    std::fprintf(stderr, "integration port slot %u: a block has %u\n", slot, kPortBlockSize);
    std::abort();
  }
  return static_cast<std::uint16_t>(first + slot);
}

inline const std::uint16_t kOriginNfsPort = port(0);
inline const std::uint16_t kOriginMountPort = port(1);
inline const std::uint16_t kGatewayPort = port(2);
inline const std::uint16_t kSecondGatewayPort = port(3);
/// two_nodes_test: HAProxy in front of the gateways on kGatewayPort and kSecondGatewayPort.
inline const std::uint16_t kBalancerPort = port(4);
/// An origin that is deliberately not running when nfsgw starts (origin_down_test).
inline const std::uint16_t kLateOriginNfsPort = port(5);
inline const std::uint16_t kLateOriginMountPort = port(6);

/// The wan-emu relay between a second nfsgw and the origin (errors_test).
inline const std::uint16_t kRelayNfsPort = port(7);
inline const std::uint16_t kRelayMountPort = port(8);
inline const std::uint16_t kRelayControlPort = port(9);

/// wan_test: origin <- wan-emu relay <- nfsgw, apart from the ports above.
inline const std::uint16_t kWanOriginNfsPort = port(10);
inline const std::uint16_t kWanOriginMountPort = port(11);
inline const std::uint16_t kWanRelayNfsPort = port(12);
inline const std::uint16_t kWanRelayMountPort = port(13);
inline const std::uint16_t kWanRelayControlPort = port(14);
inline const std::uint16_t kWanGatewayPort = port(15);

/// rpcbind_test: an nfsgw that registers itself, and an origin that never runs.
inline const std::uint16_t kRpcbindGatewayPort = port(16);
inline const std::uint16_t kRpcbindAbsentOriginNfsPort = port(17);
inline const std::uint16_t kRpcbindAbsentOriginMountPort = port(18);

/// metadata_cache_test: origin <- wan-emu relay <- nfsgw (metadata cache on), and a
/// second nfsgw for the tests that need their own [cache] settings or a second
/// node sharing the secret.
inline const std::uint16_t kMetaOriginNfsPort = port(19);
inline const std::uint16_t kMetaOriginMountPort = port(20);
inline const std::uint16_t kMetaRelayNfsPort = port(21);
inline const std::uint16_t kMetaRelayMountPort = port(22);
inline const std::uint16_t kMetaRelayControlPort = port(23);
inline const std::uint16_t kMetaGatewayPort = port(24);
inline const std::uint16_t kMetaSecondGatewayPort = port(25);

/// data_cache_test: origin <- wan-emu relay (counts READ bytes) <- nfsgw (data cache on).
inline const std::uint16_t kDataOriginNfsPort = port(26);
inline const std::uint16_t kDataOriginMountPort = port(27);
inline const std::uint16_t kDataRelayNfsPort = port(28);
inline const std::uint16_t kDataRelayMountPort = port(29);
inline const std::uint16_t kDataRelayControlPort = port(30);
inline const std::uint16_t kDataGatewayPort = port(31);

/// frozen_origin_test: origin (frozen with SIGSTOP) <- wan-emu relay (counts what
/// reaches the origin) <- nfsgw with a short origin_timeout.
inline const std::uint16_t kFrozenOriginNfsPort = port(32);
inline const std::uint16_t kFrozenOriginMountPort = port(33);
inline const std::uint16_t kFrozenRelayNfsPort = port(34);
inline const std::uint16_t kFrozenRelayMountPort = port(35);
inline const std::uint16_t kFrozenRelayControlPort = port(36);
inline const std::uint16_t kFrozenGatewayPort = port(37);

/// hostile_input_test: origin <- wan-emu relay (counts what reaches the origin) <-
/// nfsgw with several exports.
inline const std::uint16_t kHostileOriginNfsPort = port(38);
inline const std::uint16_t kHostileOriginMountPort = port(39);
inline const std::uint16_t kHostileRelayNfsPort = port(40);
inline const std::uint16_t kHostileRelayMountPort = port(41);
inline const std::uint16_t kHostileRelayControlPort = port(42);
inline const std::uint16_t kHostileGatewayPort = port(43);

/// crash_test: origin <- nfsgw killed, stopped and starved of cache disk under load.
inline const std::uint16_t kCrashOriginNfsPort = port(44);
inline const std::uint16_t kCrashOriginMountPort = port(45);
inline const std::uint16_t kCrashGatewayPort = port(46);
inline const std::uint16_t kCrashSmallDiskGatewayPort = port(47);

/// reload_test: origin <- nfsgw whose configuration is reloaded under load.
inline const std::uint16_t kReloadOriginNfsPort = port(48);
inline const std::uint16_t kReloadOriginMountPort = port(49);
inline const std::uint16_t kReloadGatewayPort = port(50);

/// metrics_test: origin <- nfsgw with its Prometheus endpoint, scraped with curl.
inline const std::uint16_t kMetricsOriginNfsPort = port(51);
inline const std::uint16_t kMetricsOriginMountPort = port(52);
inline const std::uint16_t kMetricsGatewayPort = port(53);
inline const std::uint16_t kMetricsEndpointPort = port(54);
inline const std::uint16_t kMetricsSecondGatewayPort = port(55);

/// origin_faults_test: origin <- wan-emu relay (cut for 60 s) <- nfsgw under load;
/// the origin is also killed and restarted.
inline const std::uint16_t kFaultsOriginNfsPort = port(56);
inline const std::uint16_t kFaultsOriginMountPort = port(57);
inline const std::uint16_t kFaultsRelayNfsPort = port(58);
inline const std::uint16_t kFaultsRelayMountPort = port(59);
inline const std::uint16_t kFaultsRelayControlPort = port(60);
inline const std::uint16_t kFaultsGatewayPort = port(61);

/// warm_test: origin <- wan-emu relay (20 ms RTT, counts what reaches the origin) <-
/// nfsgw, warmed with `nfsgw warm`.
inline const std::uint16_t kWarmOriginNfsPort = port(62);
inline const std::uint16_t kWarmOriginMountPort = port(63);
inline const std::uint16_t kWarmRelayNfsPort = port(64);
inline const std::uint16_t kWarmRelayMountPort = port(65);
inline const std::uint16_t kWarmRelayControlPort = port(66);
inline const std::uint16_t kWarmGatewayPort = port(67);

/// write_back_test: origin (killed and restarted) <- nfsgw with write-back exports,
/// killed with -9 under writes.
inline const std::uint16_t kWriteBackOriginNfsPort = port(68);
inline const std::uint16_t kWriteBackOriginMountPort = port(69);
inline const std::uint16_t kWriteBackGatewayPort = port(70);
/// A second nfsgw of the same origin, one test at a time: its cache on a small
/// tmpfs (disk full), or run under the power-loss shim.
inline const std::uint16_t kWriteBackSecondGatewayPort = port(71);

/// nlm_test: the shared origin's NLM, and an nfsgw serving NLM.
inline const std::uint16_t kNlmOriginPort = port(72);
inline const std::uint16_t kNlmGatewayPort = port(73);
inline const std::uint16_t kNlmGatewayNlmPort = port(74);
/// nlm_test: a second nfsgw serving NLM (killed with -9 and started again), and
/// stand-ins for a client's NLM and statd (TCP) that both nfsgw reach there.
inline const std::uint16_t kNlmRestartGatewayPort = port(75);
inline const std::uint16_t kNlmRestartGatewayNlmPort = port(76);
inline const std::uint16_t kNlmClientNlmPort = port(77);
inline const std::uint16_t kNlmClientStatdPort = port(78);

/// nlm_hostile_test: the shared origin's NLM, and an nfsgw serving NLM with small bounds.
inline const std::uint16_t kNlmHostileOriginNlmPort = port(80);
inline const std::uint16_t kNlmHostileGatewayPort = port(81);
inline const std::uint16_t kNlmHostileGatewayNlmPort = port(82);

/// nlm_write_back_test: the shared origin's NLM, and an nfsgw serving NLM with a
/// write-back export.
inline const std::uint16_t kNlmWbOriginNlmPort = port(83);
inline const std::uint16_t kNlmWbGatewayPort = port(84);
inline const std::uint16_t kNlmWbGatewayNlmPort = port(85);

/// nlm_origin_restart_test: the shared origin's NLM (restarted during the test),
/// and an nfsgw serving NLM in front of it.
inline const std::uint16_t kNlmOrOriginNlmPort = port(86);
inline const std::uint16_t kNlmOrGatewayPort = port(87);
inline const std::uint16_t kNlmOrGatewayNlmPort = port(88);

/// nlm_test: the metrics endpoint of its second nfsgw.
inline const std::uint16_t kNlmMetricsPort = port(89);

}  // namespace integ
