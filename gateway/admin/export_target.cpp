#include "gateway/admin/export_target.h"

#include <stdexcept>

#include "gateway/admin/admin_protocol.h"

namespace nfsgw::admin {

namespace {

std::string known(const std::vector<std::string>& exports) {
  std::string s;
  for (const auto& e : exports) s += (s.empty() ? "" : ", ") + e;
  return s.empty() ? std::string("none") : s;
}

}  // namespace

ExportTarget split_export_target(std::string_view target, const std::vector<std::string>& export_paths) {
  if (target.empty() || target[0] != '/')
    throw std::invalid_argument("'" + std::string(target) +
                                "' is not an absolute path; give EXPORT[/PATH], one of the exports: " +
                                known(export_paths));
  // "" for "/", else "/a/b".
  const std::string path = normalize_subpath(target);
  const std::string* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& e : export_paths) {
    const std::string ep = normalize_subpath(e);  // "/" becomes "", like `path`
    const bool match = path == ep || (path.size() > ep.size() && path.compare(0, ep.size(), ep) == 0 &&
                                      path[ep.size()] == '/');
    if (match && (!best || ep.size() > best_len)) {
      best = &e;
      best_len = ep.size();
    }
  }
  if (!best)
    throw std::invalid_argument("'" + std::string(target) + "' is not under any export; the exports are: " +
                                known(export_paths));
  return {*best, path.substr(best_len)};
}

}  // namespace nfsgw::admin
