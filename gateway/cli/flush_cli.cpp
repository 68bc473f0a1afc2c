#include "gateway/cli/flush_cli.h"

#include <exception>
#include <optional>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>

#include "config/config.h"
#include "gateway/admin/admin_client.h"
#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/export_target.h"
#include "gateway/admin/stats_format.h"
#include "gateway/cli/progress_view.h"

namespace nfsgw::admin {

namespace {

struct FlushArgs {
  std::string config_path;
  std::optional<std::string> target;  // none: every export
};

FlushArgs parse_flush_args(const std::vector<std::string>& args) {
  FlushArgs a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--config") {
      if (i + 1 >= args.size()) throw std::invalid_argument("--config needs a value");
      a.config_path = args[++i];
    } else if (arg.rfind("-", 0) == 0) {
      throw std::invalid_argument("unexpected argument '" + arg + "' for flush");
    } else if (!a.target) {
      a.target = arg;
    } else {
      throw std::invalid_argument("flush takes at most one EXPORT[/PATH]; '" + *a.target + "' and '" + arg +
                                  "' given");
    }
  }
  if (a.config_path.empty()) throw std::invalid_argument("flush needs --config FILE");
  return a;
}

int flush_usage_error(std::ostream& err, const std::string& message) {
  err << "nfsgw: " << message << "\nusage: " << flush_usage();
  return kExitUnreachable;  // 2, as for every usage error of nfsgw
}

}  // namespace

const char* flush_usage() { return "nfsgw flush --config FILE [EXPORT[/PATH]]\n"; }

std::string flush_progress_line(const FlushFigures& f, double elapsed_s) {
  std::string rate;
  if (elapsed_s > 0.0)
    rate = " (" + format_size(static_cast<std::uint64_t>(static_cast<double>(f.bytes_flushed) / elapsed_s)) + "/s)";
  return fmt::format("flush: {} file{}, {} left; {} flushed{}, {} elapsed", warm::format_count(f.files_left),
                     f.files_left == 1 ? "" : "s", format_size(f.bytes_left), format_size(f.bytes_flushed), rate,
                     warm::format_clock(elapsed_s));
}

std::string flush_done_line(const std::string& target, const FlushSummary& s, const std::string& message) {
  return fmt::format("flushed {}: {} in {:.1f} s; {}\n", target, format_size(s.figures.bytes_flushed),
                     static_cast<double>(s.ms) / 1000.0, message);
}

int flush_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
               const warm::WarmTerminal& term,
               const std::function<std::chrono::steady_clock::time_point()>& now) {
  FlushArgs a;
  try {
    a = parse_flush_args(args);
  } catch (const std::invalid_argument& e) {
    return flush_usage_error(err, e.what());
  }
  config::Config cfg;
  try {
    cfg = config::load_config(a.config_path);
  } catch (const std::exception& e) {
    err << "nfsgw: invalid configuration: " << e.what() << "\n";
    return kExitError;
  }
  FlushRequest request;
  std::string shown = "every export";
  if (a.target) {
    std::vector<std::string> exports;
    for (const auto& e : cfg.exports) exports.push_back(e.path);
    try {
      const ExportTarget t = split_export_target(*a.target, exports);
      request = FlushRequest{t.export_path, t.subpath};
    } catch (const std::invalid_argument& e) {
      err << "nfsgw: " << e.what() << "\n";
      return kExitError;
    }
    const std::string top = normalize_subpath(request.export_path) + request.subpath;
    shown = top.empty() ? std::string("/") : top;
  }
  const std::string line = format_request(request);
  if (line.size() > kMaxRequestBytes) {
    err << "nfsgw: the path is too long for the admin protocol (" << line.size() << " bytes encoded, at most "
        << kMaxRequestBytes << ")\n";
    return kExitError;
  }

  const auto started = now();
  auto elapsed = [&] { return std::chrono::duration<double>(now() - started).count(); };
  double last_log = 0.0;
  bool drawn = false;
  std::optional<FlushSummary> summary;
  std::optional<std::string> message;
  auto on_line = [&](std::string_view l) {
    if (auto f = parse_flush_progress(l)) {
      const double t = elapsed();
      if (term.is_tty) {
        err << '\r' << flush_progress_line(*f, t) << "\x1b[K" << std::flush;
        drawn = true;
      } else if (t - last_log >= term.log_interval_s) {
        last_log = t;
        err << flush_progress_line(*f, t) << '\n' << std::flush;
      }
    } else if (auto s = parse_flush_summary(l)) {
      summary = *s;
    } else if (auto m = parse_flush_message(l)) {
      message = std::move(*m);
    } else {
      // A line this version does not know: show it rather than lose it.
      err << (drawn ? "\n" : "") << "nfsgw: " << l << '\n';
      drawn = false;
    }
  };
  const int code = stream_admin_request(admin_socket_path(cfg.cache.dir), line, on_line, err);
  if (drawn) err << '\n';
  if (code == kExitOk) {
    out << flush_done_line(shown, summary.value_or(FlushSummary{}), message.value_or("done"));
  } else if (summary && (summary->figures.files_left > 0 || summary->figures.bytes_left > 0)) {
    err << "nfsgw: " << shown << ": " << summary->figures.files_left << " files ("
        << format_size(summary->figures.bytes_left) << ") still dirty; " << format_size(summary->figures.bytes_flushed)
        << " flushed\n";
  }
  out.flush();
  err.flush();
  return code;
}

}  // namespace nfsgw::admin
