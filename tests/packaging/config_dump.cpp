// nfsgw_config_dump FILE: loads FILE with nfsgw's own loader (config::load_config,
// the same validation and defaults as `nfsgw --config`) and prints the settings
// the packaging checks compare with the manifests, as one JSON object. Exit 1
// with the loader's message when FILE is invalid.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "config/config.h"

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

const char* boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: nfsgw_config_dump FILE\n";
    return 2;
  }
  nfsgw::config::Config cfg;
  try {
    cfg = nfsgw::config::load_config(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "invalid configuration: " << e.what() << "\n";
    return 1;
  }
  const auto& s = cfg.server;
  const auto& c = cfg.cache;
  std::cout << "{\"server\": {\"listen\": " << json_string(s.listen) << ", \"nfs_port\": " << s.nfs_port
            << ", \"mount_port\": " << s.mount_port << ", \"threads\": " << s.threads
            << ", \"register_rpcbind\": " << boolean(s.register_rpcbind) << "},\n"
            << " \"cache\": {\"dir\": " << json_string(c.dir) << ", \"memory_mb\": " << c.memory_mb
            << ", \"metadata_max_gb\": " << c.metadata_max_gb << ", \"data_max_gb\": " << c.data_max_gb
            << ", \"block_kb\": " << c.block_kb << ", \"secret_file\": " << json_string(c.secret_file) << "},\n"
            << " \"exports\": [";
  for (std::size_t i = 0; i < cfg.exports.size(); ++i) {
    const auto& e = cfg.exports[i];
    std::cout << (i ? ",\n  " : "\n  ") << "{\"path\": " << json_string(e.path) << ", \"origin\": {\"host\": "
              << json_string(e.origin.host) << ", \"path\": " << json_string(e.origin.path)
              << ", \"nfs_port\": " << e.origin.nfs_port << ", \"mount_port\": " << e.origin.mount_port
              << "}, \"clients\": [";
    for (std::size_t j = 0; j < e.clients.size(); ++j)
      std::cout << (j ? ", " : "") << json_string(e.clients[j].text);
    std::cout << "]}";
  }
  std::cout << "]}\n";
  return 0;
}
