// `nfsgw invalidate EXPORT[/PATH]`: which configured export a path names, and the
// path inside it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nfsgw::admin {

struct ExportTarget {
  std::string export_path;  // as configured: "/export"
  std::string subpath;      // "" for the export itself, or "/a/b"
  friend bool operator==(const ExportTarget&, const ExportTarget&) = default;
};

/// Splits `target` ("/export/a/b") against the configured export paths: the
/// longest export path that is `target` or a whole-component prefix of it. Repeated
/// and trailing slashes are ignored. Throws std::invalid_argument naming the known
/// exports when none matches, or for a relative path or "." / ".." components.
ExportTarget split_export_target(std::string_view target, const std::vector<std::string>& export_paths);

}  // namespace nfsgw::admin
