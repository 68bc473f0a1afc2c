#include "gateway/app/origin_locks_factory.h"

#include "gateway/upstream/origin_nlm.h"

namespace nfsgw {

OriginLocksFactory make_origin_locks(boost::asio::io_context& io) {
  return [&io](const config::ExportConfig& e, const std::string& caller_name) -> std::unique_ptr<nlm::OriginLocks> {
    return std::make_unique<upstream::OriginNlm>(io, e.origin.host, e.origin_nlm_port, e.origin_statd_port,
                                                 e.origin_timeout, caller_name);
  };
}

void stop_origin_locks(nlm::OriginLocks& origin) {
  if (auto* o = dynamic_cast<upstream::OriginNlm*>(&origin)) o->stop();
}

}  // namespace nfsgw
