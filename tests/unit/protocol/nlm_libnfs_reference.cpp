// libnfs-backed reference encoders for NLM v4 and NSM v1 (nlm_libnfs_reference.h):
// converts nfsgw values to libnfs's generated C structs and runs its zdr_* routine.
#include "tests/unit/protocol/nlm_libnfs_reference.h"

#include <nfsc/libnfs-zdr.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nlm.h>
#include <nfsc/libnfs-raw-nsm.h>

#include <cstring>
#include <string>

namespace nfsgw::test::nlm_libnfs_ref {

namespace {

constexpr std::uint32_t kBufSize = 16 * 1024;

template <class T>
Bytes run(uint32_t (*fn)(ZDR*, T*), T& value) {
  Bytes buf(kBufSize);
  ZDR z;
  zdrmem_create(&z, reinterpret_cast<caddr_t>(buf.data()), kBufSize, ZDR_ENCODE);
  const bool ok = fn(&z, &value) != 0;
  const std::uint32_t len = zdr_getpos(&z);
  zdr_destroy(&z);
  if (!ok) return {};
  buf.resize(len);
  return buf;
}

char* mut(const void* p) { return const_cast<char*>(static_cast<const char*>(p)); }

// The C strings libnfs wants (caller names, owner handles), kept alive for one encode.
struct Strings {
  std::string a, b, c;
};

nlm_cookie to_cookie(const nlm4::Netobj& n) {
  nlm_cookie c{};
  c.data.data_len = static_cast<u_int>(n.size());
  c.data.data_val = mut(n.data());
  return c;
}

nlm4_lock to_lock(const nlm4::Lock& l, Strings& s) {
  nlm4_lock out{};
  s.a = l.caller_name;
  s.b.assign(l.oh.begin(), l.oh.end());
  out.caller_name = s.a.data();
  out.fh.data.data_len = l.fh.len;
  out.fh.data.data_val = mut(l.fh.bytes.data());
  out.oh = s.b.data();
  out.svid = static_cast<u_int>(l.svid);
  out.l_offset = l.offset;
  out.l_len = l.length;
  return out;
}

nsm_my_id to_my_id(const nsm::MyId& m, std::string& name) {
  name = m.my_name;
  nsm_my_id out{};
  out.my_name = name.data();
  out.my_prog = m.my_prog;
  out.my_vers = m.my_vers;
  out.my_proc = m.my_proc;
  return out;
}

}  // namespace

Bytes encode(const nlm4::TestArgs& v) {
  Strings s;
  NLM4_TESTargs a{};
  a.cookie = to_cookie(v.cookie);
  a.exclusive = v.exclusive;
  a.lock = to_lock(v.lock, s);
  return run(zdr_NLM4_TESTargs, a);
}

Bytes encode_granted(const nlm4::TestArgs& v) {
  Strings s;
  NLM4_GRANTEDargs a{};
  a.cookie = to_cookie(v.cookie);
  a.exclusive = v.exclusive;
  a.lock = to_lock(v.lock, s);
  return run(zdr_NLM4_GRANTEDargs, a);
}

Bytes encode(const nlm4::LockArgs& v) {
  Strings s;
  NLM4_LOCKargs a{};
  a.cookie = to_cookie(v.cookie);
  a.block = v.block;
  a.exclusive = v.exclusive;
  a.lock = to_lock(v.lock, s);
  a.reclaim = v.reclaim;
  a.state = v.state;
  return run(zdr_NLM4_LOCKargs, a);
}

Bytes encode(const nlm4::CancelArgs& v) {
  Strings s;
  NLM4_CANCargs a{};
  a.cookie = to_cookie(v.cookie);
  a.block = v.block;
  a.exclusive = v.exclusive;
  a.lock = to_lock(v.lock, s);
  return run(zdr_NLM4_CANCargs, a);
}

Bytes encode(const nlm4::UnlockArgs& v) {
  Strings s;
  NLM4_UNLOCKargs a{};
  a.cookie = to_cookie(v.cookie);
  a.lock = to_lock(v.lock, s);
  return run(zdr_NLM4_UNLOCKargs, a);
}

Bytes encode(const nlm4::Res& v) {
  NLM4_LOCKres a{};
  a.cookie = to_cookie(v.cookie);
  a.status = static_cast<nlmstat4>(v.stat);
  return run(zdr_NLM4_LOCKres, a);
}

Bytes encode(const nlm4::TestRes& v) {
  std::string oh(v.holder.oh.begin(), v.holder.oh.end());
  NLM4_TESTres a{};
  a.cookie = to_cookie(v.cookie);
  a.reply.status = static_cast<nlmstat4>(v.stat);
  if (v.stat == nlm4::Stat::Denied) {
    nlm4_holder& h = a.reply.nlm4_testreply_u.lock.holder;
    h.exclusive = v.holder.exclusive;
    h.svid = static_cast<u_int>(v.holder.svid);
    h.oh = oh.data();
    h.l_offset = v.holder.offset;
    h.l_len = v.holder.length;
  }
  return run(zdr_NLM4_TESTres, a);
}

Bytes encode(const nsm::SmName& v) {
  std::string name = v.mon_name;
  NSM1_STATargs a{};
  a.mon_name = name.data();
  return run(zdr_NSM1_STATargs, a);
}

Bytes encode(const nsm::Mon& v) {
  std::string mon_name = v.mon_id.mon_name, my_name;
  NSM1_MONargs a{};
  a.mon_id.mon_name = mon_name.data();
  a.mon_id.my_id = to_my_id(v.mon_id.my_id, my_name);
  std::memcpy(a.priv, v.priv.data(), sizeof a.priv);
  return run(zdr_NSM1_MONargs, a);
}

Bytes encode(const nsm::MonId& v) {
  std::string mon_name = v.mon_name, my_name;
  NSM1_UNMONargs a{};
  a.mon_id.mon_name = mon_name.data();
  a.mon_id.my_id = to_my_id(v.my_id, my_name);
  return run(zdr_NSM1_UNMONargs, a);
}

Bytes encode(const nsm::MyId& v) {
  std::string my_name;
  NSM1_UNMONALLargs a{};
  a.my_id = to_my_id(v, my_name);
  return run(zdr_NSM1_UNMONALLargs, a);
}

Bytes encode(const nsm::StatRes& v) {
  NSM1_MONres a{};
  a.res = static_cast<nsmstat1>(v.res);
  a.state = v.state;
  return run(zdr_NSM1_MONres, a);
}

Bytes encode(const nsm::SmStat& v) {
  NSM1_UNMONres a{};
  a.state = v.state;
  return run(zdr_NSM1_UNMONres, a);
}

Bytes encode(const nsm::StatChange& v) {
  std::string name = v.mon_name;
  NSM1_NOTIFYargs a{};
  a.mon_name = name.data();
  a.state = v.state;
  return run(zdr_NSM1_NOTIFYargs, a);
}

}  // namespace nfsgw::test::nlm_libnfs_ref
