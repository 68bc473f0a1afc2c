// Parsing of origin URLs, the libnfs form nfs://host[:port]/path[?nfsport=N&mountport=M].
//
// Only what nfsgw itself understands is accepted: libnfs knows more query
// parameters (uid, version, ...) but nfsgw sets those per call, so a stray one in
// the file is a mistake worth reporting rather than something to pass along.
#include <algorithm>
#include <string>

#include "config/config.h"

namespace nfsgw::config {
namespace {

[[noreturn]] void bad(const std::string& url, const std::string& why) {
  throw ConfigError("\"" + url + "\" is not a valid origin URL: " + why +
                    "; expected nfs://host[:port]/path[?nfsport=N&mountport=M]");
}

std::uint16_t parse_port(const std::string& url, const std::string& what, const std::string& text) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    bad(url, what + " \"" + text + "\" is not a port number (1..65535)");
  }
  unsigned long v = std::stoul(text);
  if (v < 1 || v > 65535) bad(url, what + " " + text + " is out of range (1..65535)");
  return static_cast<std::uint16_t>(v);
}

bool is_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

}  // namespace

OriginUrl OriginUrl::parse(const std::string& s) {
  OriginUrl u;
  u.text = s;
  const std::string scheme = "nfs://";
  if (s.compare(0, scheme.size(), scheme) != 0) bad(s, "it does not start with nfs://");
  std::string rest = s.substr(scheme.size());

  std::string query;
  if (auto q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest.resize(q);
  }
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  u.path = slash == std::string::npos ? std::string() : rest.substr(slash);
  if (u.path.empty()) bad(s, "it has no export path after the host");
  if (u.path.find('\0') != std::string::npos) bad(s, "the path contains a NUL character");

  // host: a name, an IPv4 address, or an IPv6 address in brackets; then an optional port.
  std::string port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) bad(s, "an IPv6 host is missing its closing ']'");
    u.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') bad(s, "unexpected \"" + after + "\" after the IPv6 host");
      port_text = after.substr(1);
      has_port = true;
    }
    if (u.host.empty() ||
        !std::all_of(u.host.begin(), u.host.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                 c == ':' || c == '.';
        })) {
      bad(s, "\"" + u.host + "\" is not an IPv6 address");
    }
  } else {
    auto colon = authority.find(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
    if (u.host.empty()) bad(s, "it has no host");
    if (!std::all_of(u.host.begin(), u.host.end(), is_host_char)) {
      bad(s, "\"" + u.host + "\" is not a host name or address");
    }
  }
  if (has_port) u.nfs_port = parse_port(s, "port", port_text);

  // query: '&'-separated name=value pairs, each name at most once.
  bool seen_nfsport = false, seen_mountport = false;
  std::size_t pos = 0;
  while (!query.empty() && pos <= query.size()) {
    auto amp = query.find('&', pos);
    std::string pair = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    pos = amp == std::string::npos ? query.size() + 1 : amp + 1;
    auto eq = pair.find('=');
    if (eq == std::string::npos) bad(s, "query parameter \"" + pair + "\" has no value");
    std::string name = pair.substr(0, eq), value = pair.substr(eq + 1);
    if (name == "nfsport") {
      if (seen_nfsport) bad(s, "nfsport is given twice");
      seen_nfsport = true;
      auto p = parse_port(s, "nfsport", value);
      if (has_port && p != u.nfs_port) {
        bad(s, "nfsport=" + value + " contradicts the port " + port_text + " after the host");
      }
      u.nfs_port = p;
    } else if (name == "mountport") {
      if (seen_mountport) bad(s, "mountport is given twice");
      seen_mountport = true;
      u.mount_port = parse_port(s, "mountport", value);
    } else {
      bad(s, "unknown query parameter \"" + name + "\" (allowed: nfsport, mountport)");
    }
  }
  return u;
}

}  // namespace nfsgw::config
