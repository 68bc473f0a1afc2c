// A warm's manifest (the Avere / HPC Cache priming workflow): the paths to warm,
// one a line, as a text file.
//
//   - a relative line names a path below the warm's target (EXPORT[/PATH]);
//   - an absolute line names a path as clients mount it ("/export/a/b"), which
//     must lie at or below the target;
//   - empty lines and lines starting with '#' are skipped; a '\r' before the
//     line's end is dropped (files written on Windows); other spaces are part of
//     the name;
//   - "." and ".." components, NUL bytes and lines longer than kMaxLineBytes are
//     refused, naming the line;
//   - a path given twice is warmed once.
// Each path is warmed with everything below it (to --depth).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nfsgw::warm {

inline constexpr std::size_t kMaxLineBytes = 4096;
inline constexpr std::size_t kMaxManifestBytes = 256u << 20;

/// The manifest's paths as paths inside the export ("" for its root, else
/// "/a/b", normalised). `export_path` is the target's export ("/export"), `base`
/// the target's path inside it ("" or "/a"). Throws std::invalid_argument
/// ("manifest line 12: ...") on the first bad line, or when no path is left.
std::vector<std::string> parse_manifest(std::string_view text, const std::string& export_path,
                                        const std::string& base);

/// Reads the file (at most kMaxManifestBytes). Throws std::invalid_argument naming
/// the file when it cannot be read.
std::string read_manifest_file(const std::string& path);

}  // namespace nfsgw::warm
