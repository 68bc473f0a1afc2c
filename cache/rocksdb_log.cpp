#include "cache/rocksdb_log.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>

#include <rocksdb/env.h>

namespace nfsgw::cache {
namespace {

class TolerantLogger final : public rocksdb::Logger {
 public:
  TolerantLogger(std::string path, std::size_t max_bytes) : path_(std::move(path)), max_bytes_(max_bytes) {
    std::rename(path_.c_str(), (path_ + ".old").c_str());
    open();
  }
  ~TolerantLogger() override {
    if (fd_ >= 0) ::close(fd_);
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    timeval tv{};
    ::gettimeofday(&tv, nullptr);
    std::tm t{};
    ::localtime_r(&tv.tv_sec, &t);
    int n = std::snprintf(line, sizeof line, "%04d/%02d/%02d-%02d:%02d:%02d.%06ld ", t.tm_year + 1900, t.tm_mon + 1,
                          t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, static_cast<long>(tv.tv_usec));
    if (n < 0) return;
    va_list copy;
    va_copy(copy, ap);
    int m = std::vsnprintf(line + n, sizeof line - static_cast<std::size_t>(n), format, copy);
    va_end(copy);
    if (m < 0) return;
    std::size_t len = std::min(sizeof line - 1, static_cast<std::size_t>(n) + static_cast<std::size_t>(m));
    if (len == 0 || line[len - 1] != '\n') line[len++] = '\n';
    std::lock_guard lock(mu_);
    if (written_ + len > max_bytes_) {
      // Start again; the full file stays as .old.
      if (fd_ >= 0) ::close(fd_);
      std::rename(path_.c_str(), (path_ + ".old").c_str());
      open();
    }
    if (fd_ < 0) return;
    // A line the disk refuses (full, read-only) is dropped; nothing else changes.
    const ssize_t w = ::write(fd_, line, len);
    if (w > 0) written_ += static_cast<std::size_t>(w);
  }

  std::size_t GetLogFileSize() const override { return written_; }

 private:
  void open() {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    written_ = 0;
  }

  const std::string path_;
  const std::size_t max_bytes_;
  std::mutex mu_;
  int fd_ = -1;
  std::atomic<std::size_t> written_{0};
};

}  // namespace

std::shared_ptr<rocksdb::Logger> make_tolerant_rocksdb_logger(const std::string& path, std::size_t max_bytes) {
  return std::make_shared<TolerantLogger>(path, max_bytes);
}

}  // namespace nfsgw::cache
