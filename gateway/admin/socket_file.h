// The admin socket's file: clearing a stale one before bind, refusing to steal a
// live one, and removing ours (and only ours) at stop.
#pragma once

#include <sys/types.h>

#include <string>

namespace nfsgw::admin {

/// Makes `path` free for bind(): nothing there, or a socket nobody listens on
/// (left by a crash), which is removed. Throws std::runtime_error when the path is
/// too long for a Unix socket, when something that is not a socket is there, or
/// when a live server answers on it (another nfsgw using the same cache dir).
void clear_stale_socket(const std::string& path);

/// Identity of the file at a path, to remove it later only if it is still ours.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool valid = false;
};
FileId file_id(const std::string& path);
/// Unlinks `path` if it is still the file `id` names.
void remove_if_same(const std::string& path, const FileId& id);

}  // namespace nfsgw::admin
