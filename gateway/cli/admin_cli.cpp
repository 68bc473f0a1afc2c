#include "gateway/cli/admin_cli.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config.h"
#include "gateway/admin/admin_client.h"
#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/export_target.h"
#include "gateway/cli/flush_cli.h"
#include "gateway/cli/warm_cli.h"

namespace nfsgw::admin {

namespace {

struct Args {
  std::string command;
  std::string config_path;
  bool json = false;
  bool recursive = false;
  std::optional<std::string> target;
};

int usage_error(std::ostream& err, const std::string& message) {
  err << "nfsgw: " << message << "\nusage: " << admin_usage();
  return kExitUnreachable;  // 2, as for every usage error of nfsgw
}

/// How `warm` and `flush` show their progress: on stderr, redrawn when a terminal.
warm::WarmTerminal stderr_terminal() {
  warm::WarmTerminal term;
  term.is_tty = ::isatty(STDERR_FILENO) == 1;
  winsize ws{};
  if (term.is_tty && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) term.width = ws.ws_col;
  return term;
}

}  // namespace

bool is_admin_subcommand(std::string_view arg) {
  return arg == "stats" || arg == "invalidate" || arg == "reload" || arg == "exports" || arg == "warm" ||
         arg == "flush";
}

const char* admin_usage() {
  return "nfsgw stats --config FILE [--json]\n"
         "       nfsgw exports --config FILE\n"
         "       nfsgw invalidate --config FILE EXPORT[/PATH] [--recursive]\n"
         "       nfsgw reload --config FILE\n"
         "       nfsgw warm --config FILE EXPORT[/PATH] [--depth N] [--data] [--parallel N] [--manifest FILE]\n"
         "       nfsgw flush --config FILE [EXPORT[/PATH]]\n";
}

int admin_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Args a;
  a.command = argc > 1 ? argv[1] : "";
  if (a.command == "warm")
    return warm::warm_main(std::vector<std::string>(argv + 2, argv + argc), out, err, stderr_terminal());
  if (a.command == "flush")
    return flush_main(std::vector<std::string>(argv + 2, argv + argc), out, err, stderr_terminal());
  const bool stats = a.command == "stats";
  const bool reload = a.command == "reload";
  const bool exports = a.command == "exports";
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      a.config_path = argv[++i];
    } else if (reload) {
      return usage_error(err, "unexpected argument '" + arg + "' for " + a.command);
    } else if (exports) {
      return usage_error(err, "unexpected argument '" + arg + "' for exports");
    } else if (stats && arg == "--json") {
      a.json = true;
    } else if (!stats && arg == "--recursive") {
      a.recursive = true;
    } else if (!stats && arg.rfind("--", 0) != 0 && !a.target) {
      a.target = arg;
    } else {
      return usage_error(err, "unexpected argument '" + arg + "' for " + a.command);
    }
  }
  if (a.config_path.empty()) return usage_error(err, a.command + " needs --config FILE");
  if (!stats && !reload && !exports && !a.target) return usage_error(err, "invalidate needs EXPORT[/PATH]");

  config::Config cfg;
  try {
    cfg = config::load_config(a.config_path);
  } catch (const std::exception& e) {
    err << "nfsgw: invalid configuration: " << e.what() << "\n";
    return kExitError;
  }
  Request request = StatsRequest{a.json};
  if (reload) {
    // The gateway reads the file itself (it refuses it with the same message); this
    // check only found its socket. The path is made absolute: nfsgw's working
    // folder is not this one's.
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(a.config_path, ec);
    request = ReloadRequest{ec ? a.config_path : absolute.lexically_normal().string()};
  } else if (exports) {
    request = ExportsRequest{};
  } else if (!stats) {
    std::vector<std::string> exports;
    for (const auto& e : cfg.exports) exports.push_back(e.path);
    try {
      const ExportTarget t = split_export_target(*a.target, exports);
      request = InvalidateRequest{t.export_path, t.subpath, a.recursive};
    } catch (const std::invalid_argument& e) {
      err << "nfsgw: " << e.what() << "\n";
      return kExitError;
    }
  }
  const std::string line = format_request(request);
  if (line.size() > kMaxRequestBytes) {
    err << "nfsgw: the path is too long for the admin protocol (" << line.size() << " bytes encoded, at most "
        << kMaxRequestBytes << ")\n";
    return kExitError;
  }
  return send_admin_request(admin_socket_path(cfg.cache.dir), line, out, err);
}

}  // namespace nfsgw::admin
