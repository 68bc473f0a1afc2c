// Command line of wan-emu (see README.md). Two modes: the relay itself, or a one-shot
// control client (`--ctl ADDR COMMAND...`) so scripts and tests need no netcat.
#pragma once

#include <utility>  // must precede Asio with Boost 1.74 under C++20

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nfsgw::wanemu {

struct PairSpec {
  boost::asio::ip::tcp::endpoint listen;
  boost::asio::ip::tcp::endpoint target;
};

struct Options {
  std::vector<PairSpec> pairs;
  std::uint32_t delay_up_ms = 0;    // client -> target
  std::uint32_t delay_down_ms = 0;  // target -> client
  std::uint64_t bandwidth_kbps = 0; // per direction, 0 = unlimited
  std::optional<boost::asio::ip::tcp::endpoint> control;
  std::string stats_file;
  std::uint64_t max_queue_kb = 32 * 1024;
  // Control client mode.
  std::optional<boost::asio::ip::tcp::endpoint> ctl;
  std::string ctl_command;
  bool help = false;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The longest one-way delay accepted (keeps RTT within what a test might want).
constexpr std::uint32_t kMaxDelayMs = 10'000;

/// "127.0.0.1:22001" -> endpoint. Throws UsageError.
boost::asio::ip::tcp::endpoint parse_endpoint(const std::string& text);
/// Decimal unsigned integer no larger than `max`. Throws UsageError.
std::uint64_t parse_number(const std::string& text, std::uint64_t max);
/// Throws UsageError on anything malformed or inconsistent.
Options parse_options(const std::vector<std::string>& args);

const char* usage_text();

}  // namespace nfsgw::wanemu
