#include "gateway/admin/admin_execute.h"

#include <exception>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "gateway/admin/stats_format.h"

namespace nfsgw::admin {

namespace {

/// Each line of `text` escaped, so that no body line can contain a control byte.
std::string body(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += escape_line(std::string_view(text).substr(start, end - start));
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string run(const Request& request, AdminCommands& commands) {
  if (const auto* s = std::get_if<StatsRequest>(&request)) {
    const stats::Report report = commands.report();
    return body(s->json ? format_stats_json(report) : format_stats_text(report));
  }
  if (const auto* r = std::get_if<ReloadRequest>(&request)) {
    spdlog::info("admin: reload {}", escape_line(r->config_path));
    return body(commands.reload(r->config_path));
  }
  if (std::holds_alternative<ExportsRequest>(request)) return body(commands.exports_table());
  if (std::holds_alternative<WarmRequest>(request))
    throw std::invalid_argument("warm runs on the session, not the worker");  // AdminSession::run_warm
  if (std::holds_alternative<FlushRequest>(request))
    throw std::invalid_argument("flush runs on the session, not the worker");  // AdminSession::run_flush
  const auto& inv = std::get<InvalidateRequest>(request);
  spdlog::info("admin: invalidate export {} path '{}'{}", escape_line(inv.export_path),
               inv.subpath.empty() ? "/" : escape_line(inv.subpath), inv.recursive ? " recursively" : "");
  const std::string message = commands.invalidate(inv.export_path, inv.subpath, inv.recursive);
  // One line, even when the message quotes a path with a newline in it.
  return message.empty() ? std::string() : escape_line(message) + '\n';
}

}  // namespace

std::string execute_request(const Request& request, AdminCommands& commands) {
  try {
    return run(request, commands) + ok_line();
  } catch (const std::invalid_argument& e) {
    return error_line(e.what());
  } catch (const std::exception& e) {
    spdlog::error("admin command failed: {}", e.what());
    return error_line(std::string("internal error: ") + e.what());
  } catch (...) {
    spdlog::error("admin command failed with an unknown exception");
    return error_line("internal error");
  }
}

}  // namespace nfsgw::admin
