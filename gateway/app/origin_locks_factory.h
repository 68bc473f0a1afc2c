// The origin lock managers of [server] nlm_port: gateway/upstream's OriginNlm per
// export (the export's origin host, origin_nlm_port, origin_statd_port, its
// origin_timeout as the bound of every call). Apart from lock_service so that the
// lock service is built and tested without libnfs. And its other peers.
#pragma once

#include <boost/asio/io_context.hpp>

#include "gateway/app/lock_service.h"

namespace nfsgw {

OriginLocksFactory make_origin_locks(boost::asio::io_context& io);
/// OriginNlm::stop for what make_origin_locks made.
void stop_origin_locks(nlm::OriginLocks& origin);

/// The lock service's other peers: the host's statd (HostStatd at 127.0.0.1, port
/// from rpcbind, my_vers the callback version, calls bounded by 15 s), NLM_GRANTED
/// to clients (ClientNlm, 2 s), the restart notice to client hosts' statd
/// (upstream::notify_restart, 16 at a time, 5 s each).
///
/// Test hooks (environment, read here once): NFSGW_NLM_CLIENT_NLM_PORT and
/// NFSGW_NLM_CLIENT_STATD_PORT, when set, are the ports of every client's NLM and
/// statd instead of those their rpcbind gives: on one test host, the client's
/// rpcbind is the host's, whose NLM and statd entries belong to others.
LockPeersFactory make_lock_peers(boost::asio::io_context& io);

}  // namespace nfsgw
