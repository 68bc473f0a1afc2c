// A tmpfs of a given size mounted on a folder for the life of the object (needs
// root): the cache disk that fills, for the crash and write-back tests.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace integ {

class SmallDisk {
 public:
  SmallDisk(const std::string& dir, unsigned megabytes) : dir_(dir) {
    make_dirs(dir);
    auto r = run({"mount", "-t", "tmpfs", "-o", "size=" + std::to_string(megabytes) + "m", "tmpfs", dir},
                 std::chrono::seconds(20));
    mounted_ = r.exit_code == 0;
    error_ = r.output;
  }
  ~SmallDisk() {
    if (mounted_) run({"umount", "-l", dir_}, std::chrono::seconds(20));
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

  /// Writes a file of zeros until the disk says ENOSPC (bounded by the tmpfs size).
  bool fill() {
    std::FILE* f = std::fopen((dir_ + "/filler").c_str(), "wb");
    if (!f) return false;
    const std::string mib(1 << 20, '\0');
    for (int i = 0; i < 4096; ++i)
      if (std::fwrite(mib.data(), 1, mib.size(), f) != mib.size()) break;
    std::fclose(f);  // the last, partial buffer fails here too: the disk is full
    return true;
  }
  void free_space() { std::remove((dir_ + "/filler").c_str()); }

 private:
  std::string dir_, error_;
  bool mounted_ = false;
};

}  // namespace integ
