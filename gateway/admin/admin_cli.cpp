#include "gateway/admin/admin_cli.h"

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

}  // namespace

bool is_admin_subcommand(std::string_view arg) {
  return arg == "stats" || arg == "invalidate" || arg == "reload";
}

const char* admin_usage() {
  return "nfsgw stats --config FILE [--json]\n"
         "       nfsgw invalidate --config FILE EXPORT[/PATH] [--recursive]\n"
         "       nfsgw reload --config FILE\n";
}

int admin_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Args a;
  a.command = argc > 1 ? argv[1] : "";
  const bool stats = a.command == "stats";
  const bool reload = a.command == "reload";
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      a.config_path = argv[++i];
    } else if (reload) {
      return usage_error(err, "unexpected argument '" + arg + "' for " + a.command);
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
  if (!stats && !reload && !a.target) return usage_error(err, "invalidate needs EXPORT[/PATH]");

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
