// The origin lock managers of [server] nlm_port: gateway/upstream's OriginNlm per
// export (the export's origin host, origin_nlm_port, origin_statd_port, its
// origin_timeout as the bound of every call). Apart from lock_service so that the
// lock service is built and tested without libnfs.
#pragma once

#include <boost/asio/io_context.hpp>

#include "gateway/app/lock_service.h"

namespace nfsgw {

OriginLocksFactory make_origin_locks(boost::asio::io_context& io);
/// OriginNlm::stop for what make_origin_locks made.
void stop_origin_locks(nlm::OriginLocks& origin);

}  // namespace nfsgw
