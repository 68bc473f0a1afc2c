#include "tests/support/lock_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace integ {

Handle handle_of(std::uint16_t nfs_port, std::uint16_t mount_port, const std::string& path, const std::string& name) {
  RawMount m = mount_root(mount_port, path);
  EXPECT_TRUE(m.transport_ok && m.status == 0) << m.error;
  RawNfsConnection c;
  EXPECT_TRUE(c.connect(nfs_port, kNfsProgram, 3)) << c.error();
  RawLookup l = c.lookup(m.root, name);
  EXPECT_TRUE(l.transport_ok && l.status == 0) << l.error << " status " << l.status;
  return l.handle;
}

bool locked_at_origin(const std::string& path, off_t start, off_t len) {
  const int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return false;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  const bool locked = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  ::close(fd);
  return locked;
}

}  // namespace integ
