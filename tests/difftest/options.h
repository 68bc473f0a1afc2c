// nfsgw-difftest's command line (docs/difftest.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/difftest/generator.h"

namespace difftest {

struct Options {
  std::vector<std::uint64_t> seeds = {1};
  std::uint64_t calls = 100000;  // calls to nfsgw per seed, at most
  double seconds = 60;           // per seed, at most
  GeneratorOptions generator;
  std::optional<std::string> nfsgw;  // the binary; default: $NFSGW_BIN, else the built one
  bool keep_going = false;           // go on after a violation (else stop at the first)
  std::string stop_on;               // stop (and shrink) only for a violation whose kind holds this
  bool shrink = true;
  double shrink_seconds = 300;
  bool verbose = false;
  std::uint16_t port_base = 30300;   // the origin on this port and the next, nfsgw on the one after
};

/// Parses argv; on a bad or unknown flag, `error` says why (and usage is printed
/// by the caller).
Options parse_options(int argc, char** argv, std::string& error);
const char* usage();

}  // namespace difftest
