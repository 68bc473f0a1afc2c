#include "gateway/cli/warm_cli.h"

#include <exception>
#include <ostream>
#include <stdexcept>

#include "config/config.h"
#include "gateway/admin/admin_client.h"
#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/export_target.h"
#include "gateway/cli/manifest.h"
#include "gateway/cli/progress_view.h"
#include "gateway/cli/warm_args.h"
#include "gateway/admin/warm_wire.h"

namespace nfsgw::warm {

namespace {

int usage_error(std::ostream& err, const std::string& message) {
  err << "nfsgw: " << message << "\nusage: " << warm_usage();
  return admin::kExitUnreachable;  // 2, as for every usage error of nfsgw
}

/// Builds the request from the arguments and the configuration; throws
/// std::invalid_argument with the operator's message.
admin::WarmRequest build_request(const WarmArgs& a, const config::Config& cfg, std::string& shown_target) {
  std::vector<std::string> exports;
  for (const auto& e : cfg.exports) exports.push_back(e.path);
  const admin::ExportTarget t = admin::split_export_target(a.target, exports);
  admin::WarmRequest r;
  r.export_path = t.export_path;
  r.subpath = t.subpath;
  r.depth = a.depth;
  r.data = a.data;
  r.parallel = a.parallel;
  if (a.manifest_path) {
    const std::string text = read_manifest_file(*a.manifest_path);
    r.manifest = parse_manifest(text, t.export_path, t.subpath);
    r.manifest_count = r.manifest.size();
  }
  const std::string top = admin::normalize_subpath(t.export_path) + t.subpath;
  shown_target = (top.empty() ? std::string("/") : top) +
                 (a.manifest_path ? " (" + std::to_string(r.manifest.size()) + " manifest paths)" : std::string());
  return r;
}

}  // namespace

int warm_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const WarmTerminal& term,
              const std::function<std::chrono::steady_clock::time_point()>& now) {
  WarmArgs a;
  try {
    a = parse_warm_args(args);
  } catch (const std::invalid_argument& e) {
    return usage_error(err, e.what());
  }
  config::Config cfg;
  try {
    cfg = config::load_config(a.config_path);
  } catch (const std::exception& e) {
    err << "nfsgw: invalid configuration: " << e.what() << "\n";
    return admin::kExitError;
  }
  admin::WarmRequest request;
  std::string shown;
  try {
    request = build_request(a, cfg, shown);
  } catch (const std::invalid_argument& e) {
    err << "nfsgw: " << e.what() << "\n";
    return admin::kExitError;
  }
  const std::string wire = admin::format_request(request);
  const std::size_t first_line = wire.find('\n') + 1;
  if (first_line > admin::kMaxRequestBytes) {
    err << "nfsgw: the path is too long for the admin protocol (" << first_line << " bytes encoded, at most "
        << admin::kMaxRequestBytes << ")\n";
    return admin::kExitError;
  }

  const auto started = now();
  auto elapsed = [&] { return std::chrono::duration<double>(now() - started).count(); };
  double last_log = 0.0;
  bool bar_drawn = false;
  std::vector<WarmFailure> failures;
  std::optional<WarmOutcome> summary;
  auto on_line = [&](std::string_view line) {
    if (auto f = parse_progress(line)) {
      const double t = elapsed();
      if (term.is_tty) {
        err << '\r' << progress_bar_line(*f, a.data, t, term.width) << "\x1b[K" << std::flush;
        bar_drawn = true;
      } else if (t - last_log >= term.log_interval_s) {
        last_log = t;
        err << progress_log_line(*f, a.data, t) << '\n' << std::flush;
      }
    } else if (auto fail = parse_failure(line)) {
      failures.push_back(std::move(*fail));
    } else if (auto s = parse_summary(line)) {
      summary = *s;
    } else {
      // A line this version does not know: show it rather than lose it.
      err << (bar_drawn ? "\n" : "") << "nfsgw: " << line << '\n';
      bar_drawn = false;
    }
  };
  const int code = admin::stream_admin_request(admin::admin_socket_path(cfg.cache.dir), wire, on_line, err);
  if (bar_drawn) err << '\n';
  for (const auto& f : failures) err << "nfsgw: failed: " << f.path << ": " << f.why << '\n';
  if (summary) {
    out << summary_text(shown, *summary, a.data);
    if (summary->figures.failed > failures.size())
      err << "nfsgw: " << summary->figures.failed << " paths failed; the first " << failures.size()
          << " are named above (nfsgw's log names them all)\n";
  }
  out.flush();
  err.flush();
  return code;
}

}  // namespace nfsgw::warm
