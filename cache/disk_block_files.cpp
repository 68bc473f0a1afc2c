// BlockFiles on a local file system: pwrite/pread on sparse files, opened per
// call (a block is 64 KiB..16 MiB: an open is small next to its copy), holes
// punched with fallocate.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cache/block_files.h"
#include "cache/unique_fd.h"
#include "cache/block_store.h"

namespace nfsgw::cache {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw BlockStoreError("data cache: " + what + " " + path + ": " + std::strerror(err), err);
}

bool is_hex(const std::string& s, std::size_t size) {
  return s.size() == size && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

class DiskBlockFiles final : public BlockFiles {
 public:
  explicit DiskBlockFiles(std::string dir) : dir_(std::move(dir)) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) fail("cannot create", dir_, ec.value());
  }

  void write(std::uint64_t id, std::uint64_t offset, std::string_view data) override {
    const std::string p = path(id);
    int raw = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (raw < 0 && errno == ENOENT) {
      if (::mkdir(subdir(id).c_str(), 0700) != 0 && errno != EEXIST) fail("cannot create", subdir(id), errno);
      raw = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    }
    if (raw < 0) fail("cannot open", p, errno);
    UniqueFd fd(raw);
    std::size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::pwrite(fd.get(), data.data() + done, data.size() - done,
                           static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("cannot write", p, n < 0 ? errno : ENOSPC);
      done += static_cast<std::size_t>(n);
    }
  }

  std::size_t read(std::uint64_t id, std::uint64_t offset, char* out, std::size_t size) override {
    const std::string p = path(id);
    int raw = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (raw < 0) {
      if (errno == ENOENT) return 0;
      fail("cannot open", p, errno);
    }
    UniqueFd fd(raw);
    std::size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd.get(), out + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot read", p, errno);
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  void punch(std::uint64_t id, std::uint64_t offset, std::uint64_t size) override {
    int raw = ::open(path(id).c_str(), O_WRONLY | O_CLOEXEC);
    if (raw < 0) return;
    UniqueFd fd(raw);
    (void)::fallocate(fd.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                      static_cast<off_t>(size));
  }

  void remove(std::uint64_t id) override { (void)::unlink(path(id).c_str()); }

  std::uint64_t remove_unknown(const std::function<bool(std::uint64_t)>& known) override {
    std::uint64_t removed = 0;
    std::error_code ec;
    for (std::filesystem::recursive_directory_iterator it(dir_, ec), end; !ec && it != end;
         it.increment(ec)) {
      // Only <2 hex>/<16 hex> files: nothing else under `dir` is ours.
      if (it.depth() != 1 || !it->is_regular_file(ec) ||
          !is_hex(it->path().parent_path().filename().string(), 2))
        continue;
      const std::string name = it->path().filename().string();
      if (is_hex(name, 16) && known(std::stoull(name, nullptr, 16))) continue;
      if (::unlink(it->path().c_str()) == 0) ++removed;
    }
    return removed;
  }

 private:
  std::string subdir(std::uint64_t id) const {
    char s[8];
    std::snprintf(s, sizeof s, "/%02x", static_cast<unsigned>(id & 0xff));
    return dir_ + s;
  }
  std::string path(std::uint64_t id) const {
    char s[24];
    std::snprintf(s, sizeof s, "/%016llx", static_cast<unsigned long long>(id));
    return subdir(id) + s;
  }

  std::string dir_;
};

}  // namespace

std::unique_ptr<BlockFiles> open_disk_block_files(const std::string& dir) {
  return std::make_unique<DiskBlockFiles>(dir);
}

}  // namespace nfsgw::cache
