#include "tools/wan-emu/pair_listener.h"

#include <memory>

#include "tools/wan-emu/relay_session.h"

namespace nfsgw::wanemu {

using boost::system::error_code;

PairListener::PairListener(boost::asio::any_io_executor ex, const tcp::endpoint& listen,
                           const tcp::endpoint& target, std::shared_ptr<LinkState> link)
    : acceptor_(ex), backoff_(ex), target_(target), link_(std::move(link)) {
  acceptor_.open(listen.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(listen);
  acceptor_.listen(1024);
}

void PairListener::stop() {
  error_code ignored;
  acceptor_.close(ignored);
  backoff_.cancel();
}

void PairListener::accept() {
  acceptor_.async_accept([this](const error_code& ec, tcp::socket s) {
    if (ec == boost::asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Transient accept errors (EMFILE, ECONNABORTED) must not stop the listener,
      // nor make it spin: retry a little later.
      backoff_.expires_after(std::chrono::milliseconds(50));
      backoff_.async_wait([this](const error_code& wec) {
        if (!wec && acceptor_.is_open()) accept();
      });
      return;
    }
    if (link_->cut) {
      ++link_->counters.connections_refused;
      error_code ignored;
      s.set_option(boost::asio::socket_base::linger(true, 0), ignored);
      s.close(ignored);
    } else {
      ++link_->counters.connections_accepted;
      std::make_shared<RelaySession>(std::move(s), link_)->start(target_);
    }
    accept();
  });
}

}  // namespace nfsgw::wanemu
