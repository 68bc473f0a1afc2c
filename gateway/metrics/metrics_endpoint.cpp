#include "gateway/metrics/metrics_endpoint.h"

#include <stdexcept>

#include <prometheus/exposer.h>

#include "config/listen_address.h"

namespace nfsgw::metrics {

MetricsEndpoint::MetricsEndpoint(const std::string& listen, std::shared_ptr<prometheus::Collectable> collector)
    : collector_(std::move(collector)) {
  std::string why;
  const auto address = config::parse_listen_address(listen, &why);
  if (!address) throw std::runtime_error("server.metrics_listen: \"" + listen + "\" is not an address: " + why);
  // civetweb's form: "ADDRESS:PORT", IPv6 in brackets, as in the config.
  const std::string bind = address->v6 ? "[" + address->host + "]:" + std::to_string(address->port)
                                       : address->host + ":" + std::to_string(address->port);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(bind, 2);
  } catch (const std::exception& ex) {
    throw std::runtime_error("server.metrics_listen: cannot listen on " + bind +
                             " (in use, or not an address of this host): " + ex.what());
  }
  exposer_->RegisterCollectable(collector_);
  const auto ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? address->port : static_cast<std::uint16_t>(ports.front());
}

MetricsEndpoint::~MetricsEndpoint() = default;

}  // namespace nfsgw::metrics
