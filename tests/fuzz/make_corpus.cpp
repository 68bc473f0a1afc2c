// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) with
// nfsgw's own encoders: valid messages that the fuzzers mutate from.
//   nfsgw_fuzz_corpus <dir>     (writes <dir>/<target>/<seed>)
// The files are kept in the repository; rerun this only to change the seeds.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cache/handle_codec.h"
#include "cache/kv_store.h"
#include "protocol/mount3_types.h"
#include "protocol/nfs3_codec.h"
#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"

namespace {

using namespace nfsgw;
using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

fs::path g_out;

void put(const std::string& target, const std::string& name, const Bytes& b) {
  fs::create_directories(g_out / target);
  std::ofstream(g_out / target / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                                                static_cast<std::streamsize>(b.size()));
}
void put_text(const std::string& target, const std::string& name, const std::string& s) {
  put(target, name, Bytes(s.begin(), s.end()));
}

nfs3::FileHandle handle(std::size_t n, std::uint8_t fill) {
  return nfs3::FileHandle(Bytes(n, fill));
}

template <typename T>
Bytes encoded(const T& v) {
  Bytes out;
  xdr::Writer w(out);
  if constexpr (std::is_same_v<T, mount3::MntArgs> || std::is_same_v<T, mount3::UmntArgs>) {
    mount3::encode(w, v);
  } else {
    nfs3::encode(w, v);
  }
  return out;
}

Bytes call(std::uint32_t prog, std::uint32_t vers, std::uint32_t proc, bool auth_sys, const Bytes& args) {
  rpc::CallHeader h;
  h.xid = 0x12345678;
  h.prog = prog;
  h.vers = vers;
  h.proc = proc;
  if (auth_sys) {
    rpc::AuthSys a;
    a.stamp = 1;
    a.machinename = "client.example";
    a.uid = 1000;
    a.gid = 1000;
    a.gids = {1000, 27, 100};
    h.cred.flavor = static_cast<std::uint32_t>(rpc::AuthFlavor::Sys);
    h.cred.body = rpc::encode_auth_sys(a);
  }
  Bytes out;
  xdr::Writer w(out);
  rpc::encode_call_header(w, h);
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

/// Single-fragment record marking of `body`.
Bytes record(const Bytes& body) {
  Bytes out(4);
  rpc::write_record_header(out.data(), static_cast<std::uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

void call_args() {
  const auto fh = handle(28, 0xab);
  nfs3::Sattr mode_only;
  mode_only.mode = 0644;
  nfs3::Sattr all;
  all.mode = 0755;
  all.uid = 1000;
  all.gid = 1000;
  all.size = 4096;
  all.atime.how = nfs3::TimeHow::ServerTime;
  all.mtime.how = nfs3::TimeHow::ClientTime;
  all.mtime.time = {1700000000, 5};
  const nfs3::DirOpArgs where{fh, "name.txt"};
  auto seed = [](std::uint8_t proc, const std::string& name, const Bytes& args) {
    Bytes b{proc};
    b.insert(b.end(), args.begin(), args.end());
    put("call_args", name, b);
  };
  seed(0, "null", {});
  seed(1, "getattr", encoded(nfs3::GetattrArgs{fh}));
  seed(2, "setattr", encoded(nfs3::SetattrArgs{fh, all, nfs3::Time{1700000000, 1}}));
  seed(3, "lookup", encoded(nfs3::LookupArgs{where}));
  seed(4, "access", encoded(nfs3::AccessArgs{fh, 0x3f}));
  seed(5, "readlink", encoded(nfs3::ReadlinkArgs{fh}));
  seed(6, "read", encoded(nfs3::ReadArgs{fh, 8192, 4096}));
  seed(7, "write", encoded(nfs3::WriteArgs{fh, 0, 5, nfs3::StableHow::FileSync, {'h', 'e', 'l', 'l', 'o'}}));
  seed(8, "create_guarded", encoded(nfs3::CreateArgs{where, nfs3::CreateMode::Guarded, mode_only, {}}));
  seed(8, "create_exclusive",
       encoded(nfs3::CreateArgs{where, nfs3::CreateMode::Exclusive, {}, {1, 2, 3, 4, 5, 6, 7, 8}}));
  seed(9, "mkdir", encoded(nfs3::MkdirArgs{where, mode_only}));
  seed(10, "symlink", encoded(nfs3::SymlinkArgs{where, mode_only, "../target"}));
  nfs3::MknodArgs chr{where, nfs3::FileType::Chr, mode_only, {1, 3}, {}};
  seed(11, "mknod_chr", encoded(chr));
  nfs3::MknodArgs fifo{where, nfs3::FileType::Fifo, {}, {}, mode_only};
  seed(11, "mknod_fifo", encoded(fifo));
  seed(12, "remove", encoded(nfs3::RemoveArgs{where}));
  seed(13, "rmdir", encoded(nfs3::RmdirArgs{where}));
  seed(14, "rename", encoded(nfs3::RenameArgs{where, {handle(64, 0xcd), "other"}}));
  seed(15, "link", encoded(nfs3::LinkArgs{fh, where}));
  seed(16, "readdir", encoded(nfs3::ReaddirArgs{fh, 0, {}, 4096}));
  seed(17, "readdirplus", encoded(nfs3::ReaddirplusArgs{fh, 7, {9, 9, 9, 9, 9, 9, 9, 9}, 8192, 32768}));
  seed(18, "fsstat", encoded(nfs3::FsstatArgs{fh}));
  seed(19, "fsinfo", encoded(nfs3::FsinfoArgs{fh}));
  seed(20, "pathconf", encoded(nfs3::PathconfArgs{fh}));
  seed(21, "commit", encoded(nfs3::CommitArgs{fh, 0, 0}));
  seed(22, "mount_mnt", encoded(mount3::MntArgs{"/export/projects"}));
  seed(23, "mount_umnt", encoded(mount3::UmntArgs{"/export"}));
}

void rpc_header() {
  put("rpc_header", "nfs_getattr_auth_sys",
      call(nfs3::kProgram, nfs3::kVersion, 1, true, encoded(nfs3::GetattrArgs{handle(28, 0xab)})));
  put("rpc_header", "nfs_null_auth_none", call(nfs3::kProgram, nfs3::kVersion, 0, false, {}));
  put("rpc_header", "mount_mnt_auth_sys",
      call(mount3::kProgram, mount3::kVersion3, 1, true, encoded(mount3::MntArgs{"/export"})));
  rpc::AuthSys a;
  a.machinename = "h";
  a.gids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  put("rpc_header", "auth_sys_body_16_groups", rpc::encode_auth_sys(a));
}

void record_marking() {
  const Bytes getattr = call(nfs3::kProgram, nfs3::kVersion, 1, true, encoded(nfs3::GetattrArgs{handle(28, 0xab)}));
  const Bytes null_call = call(nfs3::kProgram, nfs3::kVersion, 0, false, {});
  // Byte 0: the bound (64 << (b % 9): 4 -> 1 KiB, 8 -> 16 KiB); byte 1: the read sizes' seed.
  Bytes one{4, 7};
  auto r1 = record(getattr);
  one.insert(one.end(), r1.begin(), r1.end());
  put("record_marking", "one_record", one);

  Bytes two{8, 3};
  auto r2 = record(null_call);
  two.insert(two.end(), r1.begin(), r1.end());
  two.insert(two.end(), r2.begin(), r2.end());
  put("record_marking", "two_records", two);

  // One record in two fragments: the first without the last-fragment bit.
  Bytes frag{8, 1};
  const std::size_t half = getattr.size() / 2;
  const std::uint32_t first = static_cast<std::uint32_t>(half);
  frag.insert(frag.end(), {static_cast<std::uint8_t>(first >> 24), static_cast<std::uint8_t>(first >> 16),
                           static_cast<std::uint8_t>(first >> 8), static_cast<std::uint8_t>(first)});
  frag.insert(frag.end(), getattr.begin(), getattr.begin() + static_cast<std::ptrdiff_t>(half));
  Bytes rest(getattr.begin() + static_cast<std::ptrdiff_t>(half), getattr.end());
  auto r3 = record(rest);
  frag.insert(frag.end(), r3.begin(), r3.end());
  put("record_marking", "two_fragments", frag);

  Bytes big{0, 0};  // 64-byte bound: the record is refused
  big.insert(big.end(), r1.begin(), r1.end());
  put("record_marking", "over_the_bound", big);
}

void handle_codec() {
  // The fuzz target's secret (32 bytes of 0x5c) and a fresh store, as there.
  auto store = cache::make_memory_store();
  cache::HandleCodec codec(Bytes(32, 0x5c), *store);
  auto raw = [](const nfs3::FileHandle& h) {
    Bytes b{0};
    b.insert(b.end(), h.view().begin(), h.view().end());
    return b;
  };
  put("handle_codec", "raw_root", raw(codec.root(1)));
  put("handle_codec", "raw_embedded", raw(codec.wrap(1, handle(20, 0x11))));
  put("handle_codec", "raw_mapped", raw(codec.wrap(1, handle(50, 0x11))));
  // Mode 1: export 7, a 28-byte origin handle, then flip / truncate / extend / export steps.
  Bytes tamper{1, 0, 0, 0, 7, 28};
  for (int i = 0; i < 28; ++i) tamper.push_back(static_cast<std::uint8_t>(i));
  tamper.insert(tamper.end(), {0, 3, 1, 1, 10, 0, 2, 0, 9, 3, 2, 5, 0x80, 5, 4});
  put("handle_codec", "wrap_and_tamper", tamper);
  Bytes mapped_tamper{1, 0, 0, 0, 2, 60};
  for (int i = 0; i < 60; ++i) mapped_tamper.push_back(static_cast<std::uint8_t>(0xf0 ^ i));
  mapped_tamper.insert(mapped_tamper.end(), {0, 20, 0x40, 1, 40, 0});
  put("handle_codec", "wrap_mapped_and_tamper", mapped_tamper);
  // Mode 2: export 3; the stored record replaced by another valid one.
  Bytes corrupt{2, 0, 0, 0, 3, 0, 0, 0, 3};
  for (int i = 0; i < 32; ++i) corrupt.push_back(0x44);
  put("handle_codec", "corrupt_store", corrupt);
}

void config() {
  put_text("config", "minimal.toml",
           "[cache]\ndir = \"/var/lib/nfsgw\"\n\n[[export]]\npath = \"/export\"\norigin = \"nfs://filer/vol\"\n");
  put_text("config", "full.toml", R"([server]
listen = "0.0.0.0"
nfs_port = 2049
mount_port = 0
threads = 0
register_rpcbind = true
max_record_bytes = 4194304

[cache]
dir = "/var/lib/nfsgw"
memory_mb = 512
metadata_max_gb = 4
block_kb = 1024
data_max_gb = 16
secret_file = "/var/lib/nfsgw/secret"

[[export]]
path = "/projects"
origin = "nfs://filer1.example.com/vol/projects"
access = "rw"
clients = ["10.0.0.0/8", "fd00:1::/64", "192.168.1.7"]
squash = "root"
anon_uid = 65534
anon_gid = 65534
upstream_connections = 8
metadata_cache = true
data_cache = true
readahead_kb = 4096
consistency = "ttl"
access_check = "origin"
attr_ttl = "30s"
dir_ttl = "30s"
negative_ttl = "10s"
access_ttl = "30s"
fsstat_ttl = "5s"
fsinfo_ttl = "1h"

[[export]]
path = "/datasets"
origin = "nfs://10.2.0.5/export/datasets?nfsport=2049&mountport=20048"
access = "ro"
squash = "all"
consistency = "immutable"
)");
  put_text("config", "bad_value.toml",
           "[[export]]\npath = \"/e\"\norigin = \"nfs://h/p\"\nattr_ttl = \"30 s\"\nclients = [\"10.0.0.0/33\"]\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: nfsgw_fuzz_corpus <corpus dir>\n";
    return 2;
  }
  g_out = argv[1];
  record_marking();
  rpc_header();
  call_args();
  handle_codec();
  config();
  return 0;
}
