// Scratch directories for tests: created fresh, removed (recursively) on destruction
// so that failing tests do not leave gigabytes behind in /tmp.
#pragma once

#include <string>

namespace integ {

class TempDir {
 public:
  /// Creates a unique directory /tmp/integ-<tag>-XXXXXX.
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// path() + "/" + name
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Removes `path` and everything below it; missing paths are fine.
void remove_tree(const std::string& path);
/// Creates `path` and its parents (mode 0755); throws on failure.
void make_dirs(const std::string& path);
/// Writes `text` to `path`, replacing it; throws on failure.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace integ
