// BlockFiles on a local file system: pwrite/pread on sparse files, holes punched
// with fallocate. Writes open their file per call; reads keep the descriptors of
// the most recently read files open (shared, so one being closed by the cache
// stays valid for a read in progress), which lets read_now() answer a page-cache
// hit without an open() that could wait for the disk.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <list>
#include <mutex>
#include <unordered_map>

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
    std::shared_ptr<UniqueFd> fd = cached_fd(id);
    if (!fd) {
      const std::string p = path(id);
      int raw = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
      if (raw < 0) {
        if (errno == ENOENT) return 0;
        fail("cannot open", p, errno);
      }
      fd = keep_fd(id, std::make_shared<UniqueFd>(raw));
    }
    std::size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd->get(), out + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot read", path(id), errno);
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  std::optional<std::size_t> read_now(std::uint64_t id, std::uint64_t offset, char* out,
                                      std::size_t size) override {
    std::shared_ptr<UniqueFd> fd = cached_fd(id);
    if (!fd) return std::nullopt;
    std::size_t done = 0;
    while (done < size) {
      iovec v{out + done, size - done};
      ssize_t n = ::preadv2(fd->get(), &v, 1, static_cast<off_t>(offset + done), RWF_NOWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::nullopt;  // EAGAIN: not (all) in the page cache; or an error read() reports
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

  void remove(std::uint64_t id) override {
    forget_fd(id);
    (void)::unlink(path(id).c_str());
  }

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

  // The descriptors of recently read files, least recently used first out.
  static constexpr std::size_t kOpenFiles = 256;
  std::shared_ptr<UniqueFd> cached_fd(std::uint64_t id) {
    std::lock_guard lock(fds_mu_);
    auto it = fds_.find(id);
    if (it == fds_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  std::shared_ptr<UniqueFd> keep_fd(std::uint64_t id, std::shared_ptr<UniqueFd> fd) {
    std::lock_guard lock(fds_mu_);
    auto [it, inserted] = fds_.try_emplace(id);
    if (!inserted) return it->second.first;  // another reader opened it meanwhile
    lru_.push_front(id);
    it->second = {std::move(fd), lru_.begin()};
    while (fds_.size() > kOpenFiles) {
      fds_.erase(lru_.back());
      lru_.pop_back();
    }
    return it->second.first;
  }
  void forget_fd(std::uint64_t id) {
    std::lock_guard lock(fds_mu_);
    auto it = fds_.find(id);
    if (it == fds_.end()) return;
    lru_.erase(it->second.second);
    fds_.erase(it);
  }

  std::string dir_;
  std::mutex fds_mu_;
  std::list<std::uint64_t> lru_;
  std::unordered_map<std::uint64_t, std::pair<std::shared_ptr<UniqueFd>, std::list<std::uint64_t>::iterator>> fds_;
};

}  // namespace

std::unique_ptr<BlockFiles> open_disk_block_files(const std::string& dir) {
  return std::make_unique<DiskBlockFiles>(dir);
}

}  // namespace nfsgw::cache
