#include "gateway/cli/manifest.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <unordered_set>

#include "gateway/admin/admin_protocol.h"

namespace nfsgw::warm {

std::vector<std::string> parse_manifest(std::string_view text, const std::string& export_path,
                                        const std::string& base) {
  const std::string export_norm = admin::normalize_subpath(export_path);  // "" for "/"
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = "manifest line " + std::to_string(line_no);
    if (line.size() > kMaxLineBytes)
      throw std::invalid_argument(where + ": longer than " + std::to_string(kMaxLineBytes) + " bytes");
    if (line.find('\0') != std::string_view::npos) throw std::invalid_argument(where + ": contains a NUL byte");
    std::string sub;
    try {
      if (line[0] == '/') {
        const std::string full = admin::normalize_subpath(line);
        const std::string top = export_norm + base;  // the target as clients see it
        const bool under = full == top || (full.size() > top.size() && full.compare(0, top.size(), top) == 0 &&
                                           full[top.size()] == '/');
        if (!under)
          throw std::invalid_argument("'" + admin::escape_line(line) + "' is not under the target " +
                                      (top.empty() ? std::string("/") : top));
        sub = full.substr(export_norm.size());
      } else {
        sub = admin::normalize_subpath(base + "/" + std::string(line));
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + ": " + e.what());
    }
    if (seen.insert(sub).second) {
      if (out.size() >= admin::kMaxManifestPaths)
        throw std::invalid_argument(where + ": more than " + std::to_string(admin::kMaxManifestPaths) +
                                    " paths; split the manifest");
      out.push_back(std::move(sub));
    }
  }
  if (out.empty()) throw std::invalid_argument("the manifest names no path (only empty or '#' lines)");
  return out;
}

std::string read_manifest_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read the manifest " + path + ": " + std::strerror(errno));
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxManifestBytes)
      throw std::invalid_argument("the manifest " + path + " is larger than " +
                                  std::to_string(kMaxManifestBytes >> 20) + " MiB; split it");
  }
  if (in.bad()) throw std::invalid_argument("cannot read the manifest " + path + ": read error");
  return text;
}

}  // namespace nfsgw::warm
