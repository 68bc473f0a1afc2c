// nfsgw: a caching NFSv3 re-export gateway.
//
//   nfsgw --config FILE          serve in the foreground, log to stderr
//   nfsgw --check-config FILE    validate FILE and exit
//   nfsgw stats --config FILE [--json]     the running nfsgw's cache figures
//   nfsgw invalidate --config FILE EXPORT[/PATH] [--recursive]
//                                          drop cached entries of a path
//   nfsgw reload --config FILE             apply FILE to the running nfsgw (also SIGHUP)
//   nfsgw exports --config FILE            each export's origin, windows, connections
//   nfsgw warm --config FILE EXPORT[/PATH] [--depth N] [--data] [--parallel N] [--manifest FILE]
//                                          fill the cache before clients ask
//   nfsgw flush --config FILE [EXPORT[/PATH]]
//                                          commit write-back exports' dirty data at the origin
// (the last six talk to the running nfsgw through <[cache] dir>/admin.sock)

#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "config/config.h"
#include "gateway/cli/admin_cli.h"
#include "gateway/app/gateway_app.h"

namespace {

int usage() {
  std::cerr << "usage: nfsgw --config FILE [--log-level LEVEL]\n"
               "       nfsgw --check-config FILE\n"
               "       " << nfsgw::admin::admin_usage()
            << "LEVEL: trace, debug, info (default), warn, error\n"
               "stats, exports, invalidate, reload, warm and flush talk to the running nfsgw\n"
               "through <[cache] dir>/admin.sock; they exit 0 on success, 1 on an error (warm: a\n"
               "path failed; flush: not everything could be committed), 2 when nfsgw cannot be\n"
               "reached.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && nfsgw::admin::is_admin_subcommand(argv[1]))
    return nfsgw::admin::admin_main(argc, argv, std::cout, std::cerr);
  std::string config_path;
  bool check_only = false;
  std::string level = "info";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--config" || arg == "--check-config") && i + 1 < argc) {
      check_only = arg == "--check-config";
      config_path = argv[++i];
    } else if (arg == "--log-level" && i + 1 < argc) {
      level = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      usage();
      return 0;
    } else {
      std::cerr << "nfsgw: unknown argument '" << arg << "'\n";
      return usage();
    }
  }
  if (config_path.empty()) return usage();
  // Logs go to stderr, unbuffered, so they interleave correctly with a supervisor's.
  spdlog::set_default_logger(spdlog::stderr_color_mt("nfsgw"));
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  nfsgw::config::Config cfg;
  try {
    cfg = nfsgw::config::load_config(config_path);
  } catch (const std::exception& e) {
    std::cerr << "nfsgw: invalid configuration: " << e.what() << "\n";
    return 1;
  }
  if (check_only) {
    std::cout << config_path << ": OK (" << cfg.exports.size() << " export"
              << (cfg.exports.size() == 1 ? "" : "s") << ")\n";
    return 0;
  }
  try {
    nfsgw::GatewayApp app(std::move(cfg), config_path);
    app.run(/*handle_signals=*/true);
  } catch (const std::exception& e) {
    spdlog::critical("nfsgw cannot start: {}", e.what());
    return 1;
  }
  return 0;
}
