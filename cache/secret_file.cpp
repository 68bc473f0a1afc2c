// The secret that keys gateway file handles' MACs, kept in a file.
//
// Creation must be atomic: two gateway processes starting at once must end up
// with the same secret, and neither may ever read a half-written file. So the new
// secret is written and fsynced under a temporary name, then hard-linked to the
// final name: link() fails with EEXIST instead of replacing an existing file, and
// the loser of the race simply reads the winner's complete file.
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/handle_codec.h"
#include "cache/unique_fd.h"

namespace nfsgw::cache {
namespace {

constexpr std::size_t kMinSecret = 32;
constexpr std::size_t kMaxSecret = 4096;  // a larger file is surely not a secret

[[noreturn]] void fail_errno(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

std::vector<std::uint8_t> read_secret(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_errno("cannot stat secret file", path);
  if (!S_ISREG(st.st_mode)) throw std::runtime_error("secret file " + path + " is not a regular file");
  // Whoever reads the secret can forge every file handle: it is for nfsgw's user
  // alone, as ssh insists for its private keys.
  constexpr mode_t kOpen = S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH;
  if ((st.st_mode & kOpen) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::runtime_error("secret file " + path + " has mode " + mode + ": it is " +
                             ((st.st_mode & (S_IRGRP | S_IROTH)) ? "readable" : "writable") +
                             " by group or others, and whoever reads it can forge file handles; run "
                             "`chmod 600 " + path + "` (and check who may have copied it)");
  }
  std::vector<std::uint8_t> buf(kMaxSecret + 1);
  std::size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno("cannot read secret file", path);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > kMaxSecret) {
    throw std::runtime_error("secret file " + path + " is larger than " + std::to_string(kMaxSecret) +
                             " bytes; is it the right file?");
  }
  if (got < kMinSecret) {
    throw std::runtime_error("secret file " + path + " holds " + std::to_string(got) +
                             " bytes; it needs at least " + std::to_string(kMinSecret) +
                             " (remove it to have a new one generated, which invalidates every "
                             "file handle clients hold)");
  }
  buf.resize(got);
  return buf;
}

std::vector<std::uint8_t> random_bytes(std::size_t n) {
  std::vector<std::uint8_t> out(n);
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
    got += static_cast<std::size_t>(r);
  }
  return out;
}

void write_all(int fd, const std::vector<std::uint8_t>& data, const std::string& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno("cannot write secret file", path);
    }
    done += static_cast<std::size_t>(n);
  }
}

std::string parent_dir(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

/// Writes a fresh secret under a temporary name and links it into place. Returns
/// false when another process created `path` first.
bool create_secret(const std::string& path) {
  auto secret = random_bytes(kMinSecret);
  // A unique temporary name: concurrent creators (processes or threads) never share it.
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + ".";
  for (std::uint8_t b : random_bytes(6)) tmp += "0123456789abcdef"[b & 15];
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) fail_errno("cannot create secret file", tmp);
  try {
    // Explicit, whatever the umask: the secret is for the gateway's user only.
    if (::fchmod(fd.get(), 0600) != 0) fail_errno("cannot chmod secret file", tmp);
    write_all(fd.get(), secret, tmp);
    if (::fsync(fd.get()) != 0) fail_errno("cannot sync secret file", tmp);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  int rc = ::link(tmp.c_str(), path.c_str());
  int link_errno = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) {
    if (link_errno == EEXIST) return false;
    errno = link_errno;
    fail_errno("cannot create secret file", path);
  }
  // Make the new name durable too, so a crash cannot lose a secret already in use.
  std::string dir = parent_dir(path);
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() >= 0) ::fsync(dfd.get());
  return true;
}

}  // namespace

std::vector<std::uint8_t> load_or_create_secret(const std::string& path) {
  // Two rounds at most: a missing file is created (or appears meanwhile), then read.
  for (int attempt = 0; attempt < 2; ++attempt) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() >= 0) return read_secret(fd.get(), path);
    if (errno != ENOENT) fail_errno("cannot open secret file", path);
    create_secret(path);
  }
  throw std::runtime_error("secret file " + path + " vanished right after it was created");
}

}  // namespace nfsgw::cache
