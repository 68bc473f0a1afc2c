// The HTTP endpoint Prometheus scrapes: GET /metrics at [server] metrics_listen,
// served by prometheus-cpp's Exposer (civetweb, its own two threads, none of
// nfsgw's), answering from a MetricsCollector at each scrape.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <prometheus/collectable.h>

namespace prometheus {
class Exposer;
}

namespace nfsgw::metrics {

class MetricsEndpoint {
 public:
  /// Binds `listen` ("127.0.0.1:9464", "[::1]:9464"; config/listen_address.h).
  /// Throws std::runtime_error naming the setting and the address when it cannot.
  MetricsEndpoint(const std::string& listen, std::shared_ptr<prometheus::Collectable> collector);
  ~MetricsEndpoint();

  /// The port bound (the one asked for).
  std::uint16_t port() const { return port_; }

 private:
  std::shared_ptr<prometheus::Collectable> collector_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::uint16_t port_ = 0;
};

}  // namespace nfsgw::metrics
