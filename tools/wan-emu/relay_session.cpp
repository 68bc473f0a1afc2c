#include "tools/wan-emu/relay_session.h"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

namespace nfsgw::wanemu {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
Direction other(Direction d) { return d == Direction::Up ? Direction::Down : Direction::Up; }
}  // namespace

RelaySession::RelaySession(tcp::socket client, std::shared_ptr<LinkState> link)
    : link_holder_(std::move(link)),
      link_(*link_holder_),
      client_(std::move(client)),
      target_(client_.get_executor()),
      up_(client_, target_, Direction::Up, client_.get_executor()),
      down_(target_, client_, Direction::Down, client_.get_executor()) {
  link_.sessions.insert(this);
}

RelaySession::~RelaySession() { link_.sessions.erase(this); }

void RelaySession::start(const tcp::endpoint& target) {
  error_code ignored;
  client_.set_option(tcp::no_delay(true), ignored);
  target_.async_connect(target, [self = shared_from_this()](const error_code& ec) {
    if (self->closed_) return;
    if (ec) {
      ++self->link_.counters.connect_failures;
      self->close();
      return;
    }
    error_code ignored2;
    self->target_.set_option(tcp::no_delay(true), ignored2);
    self->read(self->up_);
    self->read(self->down_);
  });
}

void RelaySession::close() { shut_down(true); }

void RelaySession::shut_down(bool reset) {
  if (closed_) return;
  closed_ = true;
  error_code ignored;
  if (reset) {
    // Linger 0: the peers see a reset, as when a WAN path dies under a connection.
    client_.set_option(asio::socket_base::linger(true, 0), ignored);
    target_.set_option(asio::socket_base::linger(true, 0), ignored);
  }
  client_.close(ignored);
  target_.close(ignored);
  up_.timer.cancel();
  down_.timer.cancel();
  up_.line.clear();
  down_.line.clear();
}

void RelaySession::read(Pipe& p) {
  if (closed_ || p.eof || p.read_paused) return;
  p.src.async_read_some(asio::buffer(p.buf),
                        [self = shared_from_this(), &p](const error_code& ec, std::size_t n) {
                          self->on_read(p, ec, n);
                        });
}

void RelaySession::observe(Pipe& p, std::size_t n) {
  DirectionCounters& dc = link_.counters.dir(p.dir);
  dc.bytes += n;
  events_.clear();
  p.parser.feed(std::span<const std::uint8_t>(p.buf.data(), n), events_);
  for (const RpcMessageInfo& ev : events_) {
    if (ev.kind == RpcMessageInfo::Kind::Call) {
      ProcKey k{ev.prog, ev.vers, ev.proc};
      link_.counters.count_call(p.dir, k);
      calls_[static_cast<int>(p.dir)].on_call(ev.xid, k);
    } else {
      auto k = calls_[static_cast<int>(other(p.dir))].on_reply(ev.xid);
      link_.counters.count_reply(p.dir, k ? &*k : nullptr);
    }
  }
  dc.unparsed_bytes += p.parser.unparsed_bytes() - p.seen_unparsed;
  p.seen_unparsed = p.parser.unparsed_bytes();
  dc.short_records += p.parser.short_records() - p.seen_short;
  p.seen_short = p.parser.short_records();
}

void RelaySession::on_read(Pipe& p, const error_code& ec, std::size_t n) {
  if (closed_) return;
  if (ec) {
    if (ec == asio::error::eof) {
      p.eof = true;
      finish_if_drained(p);
    } else {
      close();
    }
    return;
  }
  auto arrival = DelayLine::Clock::now();
  observe(p, n);

  if (link_.pass_through(p.dir) && p.line.empty() && !p.writing) {
    p.writing = true;
    asio::async_write(p.dst, asio::buffer(p.buf.data(), n),
                      [self = shared_from_this(), &p](const error_code& wec, std::size_t) {
                        p.writing = false;
                        if (self->closed_) return;
                        if (wec) return self->close();
                        self->read(p);
                      });
    return;
  }

  auto release = link_.shaper_of(p.dir).depart(arrival, n) + link_.delay_of(p.dir);
  p.line.push(release, std::span<const std::uint8_t>(p.buf.data(), n));
  pump(p);
  if (p.line.queued_bytes() >= link_.max_queued_bytes) {
    p.read_paused = true;
  } else {
    read(p);
  }
}

void RelaySession::pump(Pipe& p) {
  if (closed_ || p.writing) return;
  if (p.line.empty()) return finish_if_drained(p);
  auto now = DelayLine::Clock::now();
  if (p.line.next_release() > now) {
    if (p.timer_armed) return;  // armed for the front chunk; later ones are not earlier
    p.timer_armed = true;
    p.timer.expires_at(p.line.next_release());
    p.timer.async_wait([self = shared_from_this(), &p](const error_code& ec) {
      p.timer_armed = false;
      if (self->closed_ || ec) return;
      self->pump(p);
    });
    return;
  }
  DelayLine::Lateness late;
  p.line.take_due(now, p.inflight, 1u << 20, &late);
  DirectionCounters& dc = link_.counters.dir(p.dir);
  auto us = [](DelayLine::Clock::duration d) {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  };
  dc.delayed_chunks += late.chunks;
  dc.late_us_total += us(late.total);
  dc.late_us_max = std::max(dc.late_us_max, us(late.max));
  std::vector<asio::const_buffer> gather;
  gather.reserve(p.inflight.size());
  for (const auto& c : p.inflight) gather.emplace_back(asio::buffer(c));
  p.writing = true;
  asio::async_write(p.dst, gather, [self = shared_from_this(), &p](const error_code& ec, std::size_t) {
    p.writing = false;
    p.inflight.clear();
    if (self->closed_) return;
    if (ec) return self->close();
    if (p.read_paused && p.line.queued_bytes() < self->link_.max_queued_bytes / 2) {
      p.read_paused = false;
      self->read(p);
    }
    self->pump(p);
  });
}

void RelaySession::finish_if_drained(Pipe& p) {
  if (!p.eof || p.writing || !p.line.empty() || p.shut) return;
  p.shut = true;
  error_code ignored;
  p.dst.shutdown(tcp::socket::shutdown_send, ignored);
  Pipe& q = (&p == &up_) ? down_ : up_;
  if (q.shut) shut_down(false);  // both halves finished cleanly
}

}  // namespace nfsgw::wanemu
