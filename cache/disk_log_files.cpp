// LogFiles on a local file system: one file a segment, appended with pwrite at its
// known end, made durable with fdatasync; the directory is fsync'd after a file is
// created or removed, so that the name itself survives a power loss. Descriptors of
// the segments stay open until they are removed.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "cache/log_files.h"

namespace nfsgw::cache {
namespace {

[[noreturn]] void fail_io(const std::string& what, const std::string& path, int err) {
  throw DirtyLogError("dirty log: " + what + " " + path + ": " + std::strerror(err), err);
}

class DiskLogFiles final : public LogFiles {
 public:
  explicit DiskLogFiles(std::string dir) : dir_(std::move(dir)) {
    std::error_code ec;
    const bool made = std::filesystem::create_directories(dir_, ec);
    if (ec) fail_io("cannot create", dir_, ec.value());
    // A folder just made is durable only once its parent is synced: a power loss
    // would otherwise take it, and every segment in it, away with it.
    if (made) sync_path(std::filesystem::path(dir_).parent_path().string());
  }
  ~DiskLogFiles() override {
    for (auto& [n, f] : open_) ::close(f.fd);
  }

  std::vector<std::uint64_t> list() override {
    std::vector<std::uint64_t> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
      const std::string name = e.path().filename().string();
      std::uint64_t n = 0;
      if (parse(name, n)) out.push_back(n);
    }
    if (ec) fail_io("cannot list", dir_, ec.value());
    std::sort(out.begin(), out.end());
    return out;
  }

  void create(std::uint64_t n) override {
    const std::string p = path(n);
    const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) fail_io("cannot create", p, errno);
    std::lock_guard lock(mu_);
    open_[n] = File{fd, 0};
    sync_dir();
  }

  std::uint64_t append(std::uint64_t n, std::string_view bytes) override {
    std::lock_guard lock(mu_);
    File& f = file(n);
    const std::uint64_t at = f.size;
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t w = ::pwrite(f.fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(at + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        const int err = w < 0 ? errno : ENOSPC;
        // Whatever part was written is cut again: the segment ends where it did.
        (void)::ftruncate(f.fd, static_cast<off_t>(at));
        fail_io("cannot write", path(n), err);
      }
      done += static_cast<std::size_t>(w);
    }
    f.size = at + bytes.size();
    return at;
  }

  void sync(std::uint64_t n) override {
    int fd;
    {
      std::lock_guard lock(mu_);
      fd = file(n).fd;
    }
    // Outside the lock: appends to the segment go on while it syncs (the caller
    // knows which of them the sync covers).
    while (::fdatasync(fd) != 0) {
      if (errno != EINTR) fail_io("cannot sync", path(n), errno);
    }
  }

  bool read(std::uint64_t n, std::uint64_t offset, char* out, std::size_t size) override {
    int fd;
    {
      std::lock_guard lock(mu_);
      File& f = file(n);
      if (offset > f.size || f.size - offset < size) return false;
      fd = f.fd;
    }
    std::size_t done = 0;
    while (done < size) {
      const ssize_t r = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) fail_io("cannot read", path(n), errno);
      if (r == 0) return false;
      done += static_cast<std::size_t>(r);
    }
    return true;
  }

  std::uint64_t size(std::uint64_t n) override {
    std::lock_guard lock(mu_);
    return file(n).size;
  }

  void truncate(std::uint64_t n, std::uint64_t size) override {
    std::lock_guard lock(mu_);
    File& f = file(n);
    if (::ftruncate(f.fd, static_cast<off_t>(size)) != 0) fail_io("cannot truncate", path(n), errno);
    while (::fdatasync(f.fd) != 0) {
      if (errno != EINTR) fail_io("cannot sync", path(n), errno);
    }
    f.size = std::min(f.size, size);
  }

  void remove(std::uint64_t n) override {
    std::lock_guard lock(mu_);
    if (::unlink(path(n).c_str()) != 0 && errno != ENOENT) fail_io("cannot remove", path(n), errno);
    auto it = open_.find(n);
    if (it != open_.end()) {
      ::close(it->second.fd);
      open_.erase(it);
    }
    sync_dir();
  }

 private:
  struct File {
    int fd = -1;
    std::uint64_t size = 0;
  };

  static bool parse(const std::string& name, std::uint64_t& n) {
    if (name.size() != 20 || name.compare(16, 4, ".log") != 0) return false;
    if (name.find_first_not_of("0123456789abcdef") != 16) return false;
    n = std::stoull(name.substr(0, 16), nullptr, 16);
    return true;
  }
  std::string path(std::uint64_t n) const {
    char name[24];
    std::snprintf(name, sizeof name, "%016llx.log", static_cast<unsigned long long>(n));
    return dir_ + "/" + name;
  }
  /// The segment's open descriptor, opened on first use (segments found on start).
  File& file(std::uint64_t n) {
    auto it = open_.find(n);
    if (it != open_.end()) return it->second;
    const std::string p = path(n);
    const int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) fail_io("cannot open", p, errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      fail_io("cannot stat", p, err);
    }
    return open_[n] = File{fd, static_cast<std::uint64_t>(st.st_size)};
  }
  void sync_dir() { sync_path(dir_); }
  static void sync_path(const std::string& dir) {
    const std::string d = dir.empty() ? std::string(".") : dir;
    const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail_io("cannot open", d, errno);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) fail_io("cannot sync", d, err);
  }

  std::string dir_;
  std::mutex mu_;
  std::map<std::uint64_t, File> open_;
};

}  // namespace

std::unique_ptr<LogFiles> open_disk_log_files(const std::string& dir) { return std::make_unique<DiskLogFiles>(dir); }

}  // namespace nfsgw::cache
