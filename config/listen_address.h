// "ADDRESS:PORT" for a listener of nfsgw's own (the metrics endpoint): an IPv4
// literal ("127.0.0.1:9464") or a bracketed IPv6 literal ("[::1]:9464"). Host
// names are not resolved: what is bound must be what the config says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nfsgw::config {

struct ListenAddress {
  std::string host;  // the literal, without brackets
  std::uint16_t port = 0;
  bool v6 = false;
};

/// nullopt, and in `why` what is wrong, when `text` is not such an address.
std::optional<ListenAddress> parse_listen_address(const std::string& text, std::string* why = nullptr);

inline bool valid_listen_address(const std::string& text, std::string* why = nullptr) {
  return parse_listen_address(text, why).has_value();
}

}  // namespace nfsgw::config
