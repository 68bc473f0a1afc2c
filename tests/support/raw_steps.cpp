#include "tests/support/raw_steps.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/file_digest.h"
#include "tests/support/waiting.h"

namespace integ {

std::unique_ptr<RawNfsConnection> connect_nfs(std::uint16_t port, std::uint32_t uid, std::uint32_t gid) {
  auto c = std::make_unique<RawNfsConnection>();
  if (!c->connect(port, kNfsProgram, 3)) {
    ADD_FAILURE() << "connect to NFS on port " << port << ": " << c->error();
    return nullptr;
  }
  c->set_credentials(uid, gid);
  return c;
}

Handle must_lookup(RawNfsConnection& c, const Handle& dir, const std::string& name) {
  auto r = c.lookup(dir, name);
  if (!r.transport_ok || r.status != kNfs3Ok) {
    ADD_FAILURE() << "LOOKUP " << name << ": " << (r.transport_ok ? "status " + std::to_string(r.status) : r.error);
    return {};
  }
  return r.handle;
}

Handle must_walk(RawNfsConnection& c, Handle h, const std::string& rel_path) {
  std::stringstream ss(rel_path);
  for (std::string part; std::getline(ss, part, '/');) {
    if (part.empty()) continue;
    h = must_lookup(c, h, part);
    if (h.empty()) return {};
  }
  return h;
}

RawFattr must_getattr(RawNfsConnection& c, const Handle& fh, const std::string& what) {
  auto a = c.getattr(fh);
  if (!a.transport_ok || a.status != kNfs3Ok) {
    ADD_FAILURE() << "GETATTR " << what << ": " << (a.transport_ok ? "status " + std::to_string(a.status) : a.error);
    return {};
  }
  return a.attr;
}

void wait_past_mtime(const RawFattr& attrs, std::chrono::milliseconds later) {
  using namespace std::chrono;
  const sys_time<nanoseconds> mtime{seconds(attrs.mtime_sec) + nanoseconds(attrs.mtime_nsec)};
  nfsgw::test::wait_past(mtime + later);
}

std::string read_digest(RawNfsConnection& c, const Handle& fh, std::uint64_t size, std::uint32_t chunk) {
  Sha256 sha;
  std::uint64_t offset = 0;
  for (;;) {
    auto r = c.read(fh, offset, chunk);
    if (!r.transport_ok || r.status != kNfs3Ok) {
      ADD_FAILURE() << "READ at " << offset << ": " << (r.transport_ok ? "status " + std::to_string(r.status) : r.error);
      return "";
    }
    sha.update(r.data.data(), r.data.size());
    offset += r.data.size();
    if (r.eof || offset >= size) {
      if (offset != size || !r.eof) {
        ADD_FAILURE() << "READ ended at " << offset << " of " << size << (r.eof ? " with" : " without") << " EOF";
        return "";
      }
      break;
    }
    if (r.data.empty()) {
      ADD_FAILURE() << "READ at " << offset << " returned nothing before EOF";
      return "";
    }
  }
  return sha.hex();
}

}  // namespace integ
