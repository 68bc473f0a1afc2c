// nfsgw-bench: NFSv3 load generator over libnfs's raw async API.
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/nfsgw-bench/bench_options.h"
#include "tools/nfsgw-bench/bench_runner.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  nfsgw::bench::Options opts;
  try {
    opts = nfsgw::bench::parse_options(args);
  } catch (const std::invalid_argument& e) {
    std::cerr << "nfsgw-bench: " << e.what() << "\n\n" << nfsgw::bench::usage_text();
    return 2;
  }
  if (opts.help) {
    std::cout << nfsgw::bench::usage_text();
    return 0;
  }
  return nfsgw::bench::run_bench(opts, std::cout, std::cerr);
}
