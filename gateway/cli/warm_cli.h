// `nfsgw warm`: reads the configuration and the manifest, sends the warm to the
// running nfsgw over its admin socket, shows its progress on stderr (a bar on a
// terminal, a line every few seconds elsewhere), prints the summary on stdout and
// names the failed paths on stderr. Exit: 0 everything warmed, 1 a path failed
// (or a bad configuration, manifest or target), 2 a usage error or nfsgw
// unreachable.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace nfsgw::warm {

struct WarmTerminal {
  bool is_tty = false;  // stderr is a terminal: draw the bar
  unsigned width = 100;
  /// Seconds between two progress lines when not on a terminal.
  double log_interval_s = 5.0;
};

/// `args`: the arguments after "warm".
int warm_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const WarmTerminal& term,
              const std::function<std::chrono::steady_clock::time_point()>& now = [] {
                return std::chrono::steady_clock::now();
              });

}  // namespace nfsgw::warm
