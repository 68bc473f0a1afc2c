#include "tests/support/lock_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "tests/support/origin.h"

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

NlmGateway::NlmGateway(const std::string& tag, GatewayConfig cfg, std::uint16_t nlm_port)
    : dir_(tag), gw_(std::make_unique<Gateway>(std::move(cfg), dir_.path())) {
  gw_->start();
  if (!wait_for_port(nlm_port, 30000)) throw std::runtime_error("nfsgw's NLM port did not listen:\n" + gw_->log());
}

NlmGateway::~NlmGateway() { gw_->stop(); }

NlmGateway::File NlmGateway::make(const std::string& name, const std::string& export_path) const {
  File f;
  f.path = shared_origin().export_dir() + "/" + name;
  std::ofstream(f.path) << "locked content\n";
  ::chmod(f.path.c_str(), 0666);
  f.via_gw = handle_of(gw_->port(), gw_->port(), export_path, name);
  f.at_origin =
      handle_of(shared_origin().nfs_port(), shared_origin().mount_port(), shared_origin().export_dir(), name);
  return f;
}

namespace nlm_wire {
namespace {

void put_lock(XdrOut& x, const WireLock& l) {
  x.string(l.caller_name).opaque(l.fh).opaque(l.oh).u32(l.svid).u64(l.offset).u64(l.length);
}

}  // namespace

XdrOut call_of(std::uint32_t xid, std::uint32_t proc, const WireLock& l, bool block) {
  XdrOut x = rpc_call(xid, kProgram, kVersion, proc);
  x.opaque({0xc0, 0x01});  // cookie
  switch (proc) {
    case kTest:
    case kGranted:
      x.u32(1);  // exclusive
      put_lock(x, l);
      break;
    case kLock:
      x.u32(block ? 1 : 0).u32(1);
      put_lock(x, l);
      x.u32(0).u32(1);  // reclaim, state
      break;
    case kCancel:
      x.u32(block ? 1 : 0).u32(1);
      put_lock(x, l);
      break;
    case kUnlock: put_lock(x, l); break;
    default: break;
  }
  return x;
}

XdrOut msg_call_of(std::uint32_t xid, std::uint32_t msg_proc, const WireLock& l, bool block) {
  XdrOut x = call_of(xid, msg_proc - 5, l, block);
  XdrOut proc;
  proc.u32(msg_proc);
  std::copy(proc.bytes.begin(), proc.bytes.end(), x.bytes.begin() + 20);  // after xid, CALL, 2, prog, vers
  return x;
}

XdrOut res_call_of(std::uint32_t xid, std::uint32_t res_proc, std::uint32_t stat) {
  XdrOut x = rpc_call(xid, kProgram, kVersion, res_proc);
  x.opaque({0xc0, 0x02}).u32(stat);
  return x;
}

XdrOut share_call_of(std::uint32_t xid, std::uint32_t proc, const WireShare& s, bool reclaim) {
  XdrOut x = rpc_call(xid, kProgram, kVersion, proc);
  x.opaque({0xc0, 0x03});  // cookie
  x.string(s.caller_name).opaque(s.fh).opaque(s.oh).u32(s.mode).u32(s.access);
  x.u32(reclaim ? 1 : 0);
  return x;
}

bool is_void(const ParsedReply& r) { return r.ok && r.reply_stat == 0 && r.accept_stat == 0 && r.results.empty(); }

ParsedReply call(TcpConn& c, const std::vector<std::uint8_t>& body) {
  if (!c.send_all(record(body))) return {};
  const auto r = c.read_record(30000);
  if (!r) return {};
  return parse_reply(*r);
}

std::uint32_t stat_of(const ParsedReply& r) {
  if (!r.ok || r.reply_stat != 0 || r.accept_stat != 0 || r.results.size() < 8) return 999;
  const auto& b = r.results;
  const std::uint32_t cookie_len = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
  const std::size_t at = 4 + ((cookie_len + 3) & ~3u);
  if (cookie_len > 1024 || b.size() < at + 4) return 999;
  return (b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3];
}

std::vector<std::uint8_t> bytes_of(const Handle& h) { return std::vector<std::uint8_t>(h.begin(), h.end()); }

}  // namespace nlm_wire
}  // namespace integ
