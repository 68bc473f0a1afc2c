#include "tools/nfsgw-bench/nfs_url.h"

#include <charconv>
#include <stdexcept>

namespace nfsgw::bench {
namespace {

std::uint16_t parse_port(const std::string& key, const std::string& text) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v == 0 || v > 65535)
    throw std::invalid_argument("url: bad " + key + " '" + text + "'");
  return static_cast<std::uint16_t>(v);
}

}  // namespace

NfsUrl parse_nfs_url(const std::string& url) {
  const std::string scheme = "nfs://";
  if (url.rfind(scheme, 0) != 0) throw std::invalid_argument("url: must start with nfs://");
  std::string rest = url.substr(scheme.size());
  std::string query;
  if (auto q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest.resize(q);
  }
  auto slash = rest.find('/');
  if (slash == std::string::npos) throw std::invalid_argument("url: no export path");
  NfsUrl out;
  std::string authority = rest.substr(0, slash);
  out.export_path = rest.substr(slash);
  if (auto colon = authority.rfind(':'); colon != std::string::npos && authority.find(']') == std::string::npos) {
    out.nfs_port = parse_port("port", authority.substr(colon + 1));
    authority.resize(colon);
  }
  if (authority.empty()) throw std::invalid_argument("url: no host");
  out.host = authority;
  while (out.export_path.size() > 1 && out.export_path.back() == '/') out.export_path.pop_back();

  std::size_t pos = 0;
  while (pos < query.size()) {
    auto amp = query.find('&', pos);
    std::string kv = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    pos = amp == std::string::npos ? query.size() : amp + 1;
    if (kv.empty()) continue;
    auto eq = kv.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("url: query item without '=': " + kv);
    std::string key = kv.substr(0, eq), val = kv.substr(eq + 1);
    if (key == "nfsport") {
      out.nfs_port = parse_port(key, val);
    } else if (key == "mountport") {
      out.mount_port = parse_port(key, val);
    } else if (key == "version") {
      if (val != "3") throw std::invalid_argument("url: only version=3 is supported");
    } else {
      throw std::invalid_argument("url: unknown query key '" + key + "'");
    }
  }
  return out;
}

}  // namespace nfsgw::bench
