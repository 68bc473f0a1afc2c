#include "config/listen_address.h"

#include <arpa/inet.h>

namespace nfsgw::config {

std::optional<ListenAddress> parse_listen_address(const std::string& text, std::string* why) {
  auto no = [why](const std::string& reason) -> std::optional<ListenAddress> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (text.empty()) return no("it is empty");
  ListenAddress out;
  std::string port;
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) return no("an IPv6 address in brackets lacks its ']'");
    out.host = text.substr(1, close - 1);
    out.v6 = true;
    if (close + 1 >= text.size() || text[close + 1] != ':') return no("no \":PORT\" after the address");
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return no("no \":PORT\"");
    out.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (out.host.find(':') != std::string::npos) return no("an IPv6 address must be in brackets");
  }
  unsigned char buf[16];
  if (out.host.empty()) return no("no address before the port");
  if (inet_pton(out.v6 ? AF_INET6 : AF_INET, out.host.c_str(), buf) != 1)
    return no("\"" + out.host + "\" is not an IP" + (out.v6 ? "v6" : "v4") + " address");
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return no("\"" + port + "\" is not a port number");
  const unsigned long n = std::stoul(port);
  if (n < 1 || n > 65535) return no("port " + port + " is out of range");
  out.port = static_cast<std::uint16_t>(n);
  return out;
}

}  // namespace nfsgw::config
