// wan-emu: a WAN emulator TCP relay for testing nfsgw against a distant origin.
// See README.md for the command line, the control protocol and measurements.
#include <utility>  // must precede Asio with Boost 1.74 under C++20

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <iostream>

#include "tools/wan-emu/control_client.h"
#include "tools/wan-emu/emulator.h"
#include "tools/wan-emu/options.h"

using namespace nfsgw::wanemu;

int main(int argc, char** argv) {
  Options opts;
  try {
    opts = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& e) {
    std::cerr << "wan-emu: " << e.what() << "\n" << usage_text();
    return 2;
  }
  if (opts.help) {
    std::cout << usage_text();
    return 0;
  }
  if (opts.ctl) {
    ControlAnswer a = send_control_command(*opts.ctl, opts.ctl_command);
    (a.ok ? std::cout : std::cerr) << a.line << "\n";
    return a.ok ? 0 : 1;
  }

  std::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io(1);
  try {
    Emulator emu(io, opts);
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
      if (!ec) emu.stop();
    });
    emu.start();
    for (const PairSpec& p : opts.pairs)
      std::cout << "wan-emu relaying " << p.listen << " -> " << p.target << "\n";
    if (opts.control) std::cout << "wan-emu control on " << *opts.control << "\n";
    std::cout << "wan-emu ready" << std::endl;
    io.run();
  } catch (const std::exception& e) {
    std::cerr << "wan-emu: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
