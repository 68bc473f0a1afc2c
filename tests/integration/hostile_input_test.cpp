// Hostile and awkward input against nfsgw in front of a real origin, with the
// wan-emu relay between them counting every call that reaches the origin:
//   - READDIR/READDIRPLUS replies never exceed the client's count/maxcount, and a
//     walk of a 2,000-entry directory sees every name once;
//   - FSINFO offers no READ/WRITE larger than nfsgw's records carry, and a WRITE
//     of wtmax bytes goes through;
//   - bad names ('/', NUL, 256 bytes and more, "." and "..") are refused in every
//     procedure that takes a name, and none reaches the origin;
//   - symlinks that leave the export are data, never followed;
//   - damaged, relabelled and removed-export handles are refused (BADHANDLE or
//     STALE) and none reaches the origin;
//   - ".." at the root of an export whose origin path is a subfolder stays there.
// Calls are built by hand (tests/support/rpc_wire.h) with nfsgw's XDR codec for the
// arguments, so names with a NUL and exact maxcounts can be sent.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/mount3_types.h"
#include "protocol/nfs3_codec.h"
#include "protocol/nfs3_sizes.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/raw_steps.h"
#include "tests/support/rpc_wire.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wan_relay.h"

namespace {

using namespace integ;
namespace nfs3 = nfsgw::nfs3;
namespace mount3 = nfsgw::mount3;
namespace xdr = nfsgw::xdr;
using nfs3::Status;

constexpr std::uint32_t kRecordBytes = 256 * 1024;  // nfsgw's max_record_bytes here
constexpr unsigned kBigDirEntries = 2000;

struct Setup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<WanRelay> relay;
  std::unique_ptr<Gateway> gateway;
  std::string skip_reason;
  std::string relay_url(const std::string& below = "") const {
    return "nfs://127.0.0.1" + origin->export_dir() + below + "?nfsport=" + std::to_string(kHostileRelayNfsPort) +
           "&mountport=" + std::to_string(kHostileRelayMountPort);
  }
};

Setup& setup() {
  static Setup s;
  return s;
}

/// The gateway's exports: "/export" (nfsgw's defaults: caches on), "/plain" (the
/// same origin, every call forwarded), "/sub" (a subfolder of the origin's export,
/// forwarded) and, unless `without_gone`, "/gone" (removed by one test).
GatewayConfig gateway_config(bool without_gone = false) {
  const Setup& s = setup();
  GatewayConfig cfg;
  cfg.port = kHostileGatewayPort;
  cfg.max_record_bytes = kRecordBytes;
  cfg.origin_url = s.relay_url();
  ExportSettings plain;
  plain.export_path = "/plain";
  plain.metadata.enabled = false;
  plain.data_cache = false;
  ExportSettings sub = plain;
  sub.export_path = "/sub";
  sub.origin_url = s.relay_url("/sub");
  cfg.extra_exports = {plain, sub};
  if (!without_gone) {
    ExportSettings gone = plain;
    gone.export_path = "/gone";
    cfg.extra_exports.push_back(gone);
  }
  return cfg;
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class HostileEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto& s = setup();
    if (!nfsgw_binary()) {
      s.skip_reason = "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";
      return;
    }
    if (!wan_emu_binary()) {
      s.skip_reason = "wan-emu binary not found (build target wan-emu or set WAN_EMU_BIN)";
      return;
    }
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kHostileOriginNfsPort, kHostileOriginMountPort);
      s.origin->start();
      const std::string root = s.origin->export_dir();
      make_dirs(root + "/big");
      for (unsigned i = 0; i < kBigDirEntries; ++i)
        write_file(root + "/big/entry-" + std::to_string(i) + std::string(i % 11, 'n'), "");
      make_dirs(root + "/sub/deeper");
      write_file(root + "/sub/inner", "inside");
      write_file(root + "/file", "a file");
      write_file(root + "/target", "the handle tests' file, touched by nothing else");
      if (::symlink("/etc", (root + "/escape").c_str()) != 0 ||
          ::symlink("../../../../../../etc/passwd", (root + "/climb").c_str()) != 0)
        throw std::runtime_error("cannot make the test's symlinks");
      s.dir = std::make_unique<TempDir>("hostile");
      s.relay = std::make_unique<WanRelay>(
          std::vector<std::pair<std::uint16_t, std::uint16_t>>{{kHostileRelayNfsPort, kHostileOriginNfsPort},
                                                               {kHostileRelayMountPort, kHostileOriginMountPort}},
          kHostileRelayControlPort, s.dir->sub("relay.log"));
      s.gateway = std::make_unique<Gateway>(gateway_config(), s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }

  void TearDown() override {
    auto& s = setup();
    if (s.gateway && s.gateway->running()) {
      const int code = s.gateway->stop();
      EXPECT_EQ(code, 0) << "nfsgw did not stop cleanly on SIGTERM; log:\n" << s.gateway->log();
    }
    s.gateway.reset();
    s.relay.reset();
    s.dir.reset();
    s.origin.reset();
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new HostileEnvironment);

/// One TCP connection to nfsgw, calls built by hand. A failed call (transport, RPC
/// error) is nullopt.
class Wire {
 public:
  explicit Wire(std::uint16_t port) : conn_(port) {}
  bool connected() const { return conn_.connected(); }

  /// Sends `args` and decodes the reply; `bytes` gets the encoded result's size
  /// (status and resok or resfail, as the client's count bounds it).
  template <typename Res, typename Args>
  std::optional<Res> call(std::uint32_t prog, std::uint32_t vers, std::uint32_t proc, const Args& args,
                          std::size_t* bytes = nullptr) {
    const std::uint32_t xid = next_xid_++;
    XdrOut x = rpc_call(xid, prog, vers, proc);
    std::vector<std::uint8_t> body;
    xdr::Writer w(body);
    encode(w, args);
    x.bytes.insert(x.bytes.end(), body.begin(), body.end());
    if (!conn_.send_all(record(x.bytes))) return std::nullopt;
    const auto rec = conn_.read_record(30000);
    if (!rec) return std::nullopt;
    const ParsedReply rep = parse_reply(*rec);
    if (!rep.ok || rep.xid != xid || rep.reply_stat != 0 || rep.accept_stat != 0) return std::nullopt;
    if (bytes) *bytes = rep.results.size();
    Res res;
    try {
      xdr::Reader r(rep.results);
      decode(r, res);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    return res;
  }

  template <typename Res, typename Args>
  std::optional<Res> nfs(nfs3::Proc proc, const Args& args, std::size_t* bytes = nullptr) {
    return call<Res>(nfs3::kProgram, nfs3::kVersion, static_cast<std::uint32_t>(proc), args, bytes);
  }

  /// MNT `path`: the root handle, or an empty one (with the status in `status`).
  nfs3::FileHandle mnt(const std::string& path, std::uint32_t* status = nullptr) {
    const auto res = call<mount3::MntRes>(mount3::kProgram, mount3::kVersion3, 1, mount3::MntArgs{path});
    if (status) *status = res ? static_cast<std::uint32_t>(res->status) : ~0u;
    if (!res || res->status != mount3::Status::Ok) return {};
    return res->fhandle;
  }

  std::optional<nfs3::LookupRes> lookup(const nfs3::FileHandle& dir, const std::string& name) {
    return nfs<nfs3::LookupRes>(nfs3::Proc::Lookup, nfs3::LookupArgs{{dir, name}});
  }
  std::optional<nfs3::GetattrRes> getattr(const nfs3::FileHandle& fh) {
    return nfs<nfs3::GetattrRes>(nfs3::Proc::Getattr, nfs3::GetattrArgs{fh});
  }

 private:
  TcpConn conn_;
  std::uint32_t next_xid_ = 0x4000;
};

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!setup().skip_reason.empty()) GTEST_FAIL() << setup().skip_reason;
    ASSERT_TRUE(setup().gateway && setup().gateway->running()) << "the environment did not start";
    wire_ = std::make_unique<Wire>(kHostileGatewayPort);
    ASSERT_TRUE(wire_->connected());
  }

  /// The relay's counters (a failure when it does not answer).
  ProcCounts procs() {
    const auto p = setup().relay->procs();
    EXPECT_TRUE(p.has_value()) << "the relay gave no counters";
    return p.value_or(ProcCounts{});
  }
  void reset_relay() { ASSERT_TRUE(setup().relay->reset()); }

  nfs3::FileHandle must_mnt(const std::string& path) {
    std::uint32_t status = 0;
    nfs3::FileHandle fh = wire_->mnt(path, &status);
    EXPECT_FALSE(fh.empty()) << "MNT " << path << " failed: " << status << "\n" << setup().gateway->log();
    return fh;
  }
  nfs3::FileHandle must_lookup(const nfs3::FileHandle& dir, const std::string& name) {
    const auto r = wire_->lookup(dir, name);
    EXPECT_TRUE(r && r->status == Status::Ok) << "LOOKUP " << name << ": "
                                              << (r ? nfs3::status_name(r->status) : "no reply");
    return r && r->status == Status::Ok ? r->object : nfs3::FileHandle{};
  }

  std::unique_ptr<Wire> wire_;
};

// ---- READDIR and READDIRPLUS within the client's count -----------------------------

TEST_F(HostileInput, ReaddirplusRepliesNeverExceedMaxcountAndTheWalkSeesEveryNameOnce) {
  for (const std::string exp : {"/plain", "/export"}) {
    const nfs3::FileHandle big = must_lookup(must_mnt(exp), "big");
    ASSERT_FALSE(big.empty());
    for (const std::uint32_t maxcount : {512u, 1024u, 4096u, 32768u}) {
      SCOPED_TRACE(exp + " maxcount " + std::to_string(maxcount));
      std::map<std::string, int> seen;
      std::uint64_t cookie = 0;
      nfs3::CookieVerf verf{};
      bool eof = false;
      std::size_t largest = 0;
      unsigned pages = 0;
      while (!eof && pages < 10000) {
        ++pages;
        nfs3::ReaddirplusArgs a;
        a.dir = big;
        a.cookie = cookie;
        a.cookieverf = verf;
        a.dircount = maxcount;
        a.maxcount = maxcount;
        std::size_t bytes = 0;
        const auto res = wire_->nfs<nfs3::ReaddirplusRes>(nfs3::Proc::Readdirplus, a, &bytes);
        ASSERT_TRUE(res) << "page " << pages << " got no reply";
        ASSERT_EQ(res->status, Status::Ok) << "page " << pages << ": " << nfs3::status_name(res->status);
        largest = std::max(largest, bytes);
        EXPECT_LE(bytes, maxcount) << "page " << pages << " of " << res->entries.size() << " entries";
        ASSERT_FALSE(res->entries.empty() && !res->eof) << "page " << pages << " is empty but not the last";
        for (const auto& e : res->entries) {
          ++seen[e.name];
          cookie = e.cookie;
        }
        verf = res->cookieverf;
        eof = res->eof;
      }
      ASSERT_TRUE(eof) << "no end after " << pages << " pages";
      seen.erase(".");
      seen.erase("..");
      EXPECT_EQ(seen.size(), kBigDirEntries);
      for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name << " seen " << n << " times";
      std::cout << "[ measure  ] " << exp << " READDIRPLUS maxcount " << maxcount << ": " << pages
                << " pages, largest reply " << largest << " bytes\n";
    }
  }
}

TEST_F(HostileInput, ReaddirRepliesNeverExceedCount) {
  for (const std::string exp : {"/plain", "/export"}) {
    const nfs3::FileHandle big = must_lookup(must_mnt(exp), "big");
    ASSERT_FALSE(big.empty());
    for (const std::uint32_t count : {512u, 1024u, 4096u}) {
      SCOPED_TRACE(exp + " count " + std::to_string(count));
      std::set<std::string> seen;
      std::uint64_t cookie = 0;
      nfs3::CookieVerf verf{};
      bool eof = false;
      unsigned pages = 0;
      while (!eof && pages < 10000) {
        ++pages;
        std::size_t bytes = 0;
        const auto res =
            wire_->nfs<nfs3::ReaddirRes>(nfs3::Proc::Readdir, nfs3::ReaddirArgs{big, cookie, verf, count}, &bytes);
        ASSERT_TRUE(res);
        ASSERT_EQ(res->status, Status::Ok) << nfs3::status_name(res->status);
        EXPECT_LE(bytes, count) << "page " << pages;
        ASSERT_FALSE(res->entries.empty() && !res->eof);
        for (const auto& e : res->entries) {
          EXPECT_TRUE(seen.insert(e.name).second) << e.name << " twice";
          cookie = e.cookie;
        }
        verf = res->cookieverf;
        eof = res->eof;
      }
      ASSERT_TRUE(eof);
      EXPECT_EQ(seen.size(), kBigDirEntries + 2);
    }
  }
}

// ---- FSINFO: what nfsgw accepts ------------------------------------------------

TEST_F(HostileInput, FsinfoOffersNoMoreThanNfsgwAcceptsAndAWriteOfWtmaxGoesThrough) {
  const nfs3::FileHandle root = must_mnt("/plain");
  const auto info = wire_->nfs<nfs3::FsinfoRes>(nfs3::Proc::Fsinfo, nfs3::FsinfoArgs{root});
  ASSERT_TRUE(info);
  ASSERT_EQ(info->status, Status::Ok);
  // A WRITE of wtmax bytes, with the largest RPC header and WRITE's own fields,
  // must fit in one record of max_record_bytes.
  const std::uint32_t room = kRecordBytes - (6 * 4 + 2 * 408) - (4 + 64 + 8 + 4 + 4 + 4);
  EXPECT_GT(info->wtmax, 0u);
  EXPECT_LE(info->wtmax, room);
  EXPECT_LE(info->rtmax, room);
  EXPECT_LE(info->wtpref, info->wtmax);
  EXPECT_LE(info->rtpref, info->rtmax);
  EXPECT_LE(info->dtpref, room);
  std::cout << "[ measure  ] FSINFO through nfsgw (max_record_bytes " << kRecordBytes << "): rtmax " << info->rtmax
            << " wtmax " << info->wtmax << " dtpref " << info->dtpref << "\n";

  // A client that believes it: one WRITE of wtmax bytes, then a READ of rtmax.
  auto raw = connect_nfs(kHostileGatewayPort);
  ASSERT_TRUE(raw);
  const Handle plain(root.view().begin(), root.view().end());
  const RawCreate made = raw->create(plain, "wtmax.bin");
  ASSERT_TRUE(made.transport_ok && made.status == kNfs3Ok) << made.error << " status " << made.status;
  const std::string data(info->wtmax, 'w');
  const RawWrite w = raw->write(made.handle, 0, data);
  ASSERT_TRUE(w.transport_ok) << "nfsgw refused a WRITE of the wtmax it announced: " << w.error;
  EXPECT_EQ(w.status, kNfs3Ok);
  EXPECT_EQ(w.count, info->wtmax);
  const RawRead r = raw->read(made.handle, 0, info->rtmax);
  ASSERT_TRUE(r.transport_ok) << r.error;
  EXPECT_EQ(r.data.size(), std::min(info->rtmax, info->wtmax));
}

// ---- names --------------------------------------------------------------------------

TEST_F(HostileInput, BadNamesAreRefusedInEveryProcedureAndNeverReachTheOrigin) {
  const nfs3::FileHandle root = must_mnt("/plain");
  const nfs3::FileHandle file = must_lookup(root, "file");
  ASSERT_FALSE(file.empty());
  struct Bad {
    std::string name;
    Status lookup, make, remove, rename;
  };
  const std::vector<Bad> bad = {
      {std::string(256, 'L'), Status::NameTooLong, Status::NameTooLong, Status::NameTooLong, Status::NameTooLong},
      {std::string(3000, 'M'), Status::NameTooLong, Status::NameTooLong, Status::NameTooLong, Status::NameTooLong},
      {"sub/inner", Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {"../../etc", Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {std::string("fi\0le", 5), Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {".", Status::Ok, Status::Exist, Status::Acces, Status::Perm},
      {"..", Status::Ok, Status::Exist, Status::Acces, Status::Perm},
  };
  reset_relay();
  for (const auto& b : bad) {
    const std::string what = std::to_string(b.name.size()) + "-byte name \"" + b.name.substr(0, 10) + "\"";
    using P = nfs3::Proc;
    if (b.lookup != Status::Ok) {
      const auto r = wire_->lookup(root, b.name);
      ASSERT_TRUE(r) << "LOOKUP " << what;
      EXPECT_EQ(r->status, b.lookup) << "LOOKUP " << what;
    }
    nfs3::CreateArgs ca;
    ca.where = {root, b.name};
    ca.mode = nfs3::CreateMode::Guarded;
    auto cr = wire_->nfs<nfs3::CreateRes>(P::Create, ca);
    ASSERT_TRUE(cr) << "CREATE " << what;
    EXPECT_EQ(cr->status, b.make) << "CREATE " << what;
    nfs3::MkdirArgs ma;
    ma.where = {root, b.name};
    cr = wire_->nfs<nfs3::CreateRes>(P::Mkdir, ma);
    ASSERT_TRUE(cr);
    EXPECT_EQ(cr->status, b.make) << "MKDIR " << what;
    nfs3::SymlinkArgs sa;
    sa.where = {root, b.name};
    sa.symlink_data = "/etc";
    cr = wire_->nfs<nfs3::CreateRes>(P::Symlink, sa);
    ASSERT_TRUE(cr);
    EXPECT_EQ(cr->status, b.make) << "SYMLINK " << what;
    nfs3::MknodArgs na;
    na.where = {root, b.name};
    na.type = nfs3::FileType::Fifo;
    cr = wire_->nfs<nfs3::CreateRes>(P::Mknod, na);
    ASSERT_TRUE(cr);
    EXPECT_EQ(cr->status, b.make) << "MKNOD " << what;
    auto rm = wire_->nfs<nfs3::RemoveRes>(P::Remove, nfs3::RemoveArgs{{root, b.name}});
    ASSERT_TRUE(rm);
    EXPECT_EQ(rm->status, b.remove) << "REMOVE " << what;
    rm = wire_->nfs<nfs3::RemoveRes>(P::Rmdir, nfs3::RmdirArgs{{root, b.name}});
    ASSERT_TRUE(rm);
    EXPECT_EQ(rm->status, b.remove) << "RMDIR " << what;
    auto rn = wire_->nfs<nfs3::RenameRes>(P::Rename, nfs3::RenameArgs{{root, b.name}, {root, "renamed"}});
    ASSERT_TRUE(rn);
    EXPECT_EQ(rn->status, b.rename) << "RENAME from " << what;
    rn = wire_->nfs<nfs3::RenameRes>(P::Rename, nfs3::RenameArgs{{root, "file"}, {root, b.name}});
    ASSERT_TRUE(rn);
    EXPECT_EQ(rn->status, b.rename) << "RENAME to " << what;
    nfs3::LinkArgs la;
    la.file = file;
    la.link = {root, b.name};
    const auto ln = wire_->nfs<nfs3::LinkRes>(P::Link, la);
    ASSERT_TRUE(ln);
    EXPECT_EQ(ln->status, b.make) << "LINK " << what;
  }
  const ProcCounts refused = procs();
  for (unsigned proc : {3u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 15u})
    EXPECT_EQ(calls_of(refused, nfs3_key(proc)), 0) << nfs3::proc_name(proc) << " reached the origin: "
                                                    << describe(refused);
  // Positive control: a good name does reach the origin, and the relay counts it.
  nfs3::CreateArgs ok;
  ok.where = {root, "a fine name"};
  const auto made = wire_->nfs<nfs3::CreateRes>(nfs3::Proc::Create, ok);
  ASSERT_TRUE(made);
  EXPECT_EQ(made->status, Status::Ok);
  EXPECT_EQ(calls_of(procs(), nfs3_key(8)), 1) << describe(procs());
  // The origin holds no file made of a refused name.
  EXPECT_FALSE(std::ifstream(setup().origin->export_dir() + "/" + std::string(256, 'L')).good());
}

TEST_F(HostileInput, SymlinksThatLeaveTheExportAreDataAndNeverFollowed) {
  const nfs3::FileHandle root = must_mnt("/plain");
  for (const auto& [name, target] : std::map<std::string, std::string>{
           {"escape", "/etc"}, {"climb", "../../../../../../etc/passwd"}}) {
    const auto l = wire_->lookup(root, name);
    ASSERT_TRUE(l && l->status == Status::Ok) << name;
    ASSERT_TRUE(l->obj_attributes);
    EXPECT_EQ(l->obj_attributes->type, nfs3::FileType::Lnk) << name << " was followed";
    const auto rl = wire_->nfs<nfs3::ReadlinkRes>(nfs3::Proc::Readlink, nfs3::ReadlinkArgs{l->object});
    ASSERT_TRUE(rl && rl->status == Status::Ok);
    EXPECT_EQ(rl->data, target) << "the target is handed back as it is";
    // A name below the link is not looked up in what it points to.
    const auto below = wire_->lookup(l->object, "passwd");
    ASSERT_TRUE(below);
    EXPECT_NE(below->status, Status::Ok) << "LOOKUP through the symlink " << name << " found " << target;
    const auto read = wire_->nfs<nfs3::ReadRes>(nfs3::Proc::Read, nfs3::ReadArgs{l->object, 0, 4096});
    ASSERT_TRUE(read);
    EXPECT_NE(read->status, Status::Ok) << "READ of the symlink " << name << " read its target";
  }
  // MOUNT's walk below an export does not follow it either.
  std::uint32_t status = 0;
  EXPECT_TRUE(wire_->mnt("/plain/escape", &status).empty());
  EXPECT_EQ(status, static_cast<std::uint32_t>(mount3::Status::NotDir));
}

// ---- handles -------------------------------------------------------------------

TEST_F(HostileInput, DamagedAndRelabelledHandlesNeverReachTheOrigin) {
  const nfs3::FileHandle plain = must_mnt("/plain");
  const nfs3::FileHandle other = must_mnt("/export");
  const nfs3::FileHandle file = must_lookup(plain, "target");
  ASSERT_FALSE(file.empty());
  ASSERT_GE(file.len, 6);
  std::vector<nfs3::FileHandle> bad;
  for (const auto& good : {file, plain}) {
    for (std::size_t i = 0; i < good.len; ++i) {  // every byte flipped
      nfs3::FileHandle h = good;
      h.bytes[i] ^= 0xFF;
      bad.push_back(h);
    }
    for (std::uint8_t len = 0; len < good.len; ++len) {  // truncated
      nfs3::FileHandle h = good;
      h.len = len;
      bad.push_back(h);
    }
    for (std::size_t len = good.len + 1; len <= nfs3::kFhSize; ++len) {  // extended
      nfs3::FileHandle h = good;
      h.len = static_cast<std::uint8_t>(len);
      h.bytes[len - 1] = static_cast<std::uint8_t>(len);
      bad.push_back(h);
    }
    // Presented as another export's: the export id (bytes 1..4) of "/export".
    nfs3::FileHandle h = good;
    std::copy_n(other.bytes.begin() + 1, 4, h.bytes.begin() + 1);
    bad.push_back(h);
  }
  reset_relay();
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const auto r = wire_->getattr(bad[i]);
    ASSERT_TRUE(r) << "handle " << i << " got no answer";
    EXPECT_TRUE(r->status == Status::BadHandle || r->status == Status::Stale)
        << "handle " << i << ": " << nfs3::status_name(r->status);
    const auto l = wire_->lookup(bad[i], "target");
    ASSERT_TRUE(l);
    EXPECT_TRUE(l->status == Status::BadHandle || l->status == Status::Stale)
        << "handle " << i << ": " << nfs3::status_name(l->status);
  }
  const ProcCounts after = procs();
  EXPECT_EQ(nfs3_calls(after), 0) << bad.size() << " bad handles, and the origin saw " << describe(after);
  // Positive control: the genuine handle is forwarded ("/plain" caches nothing).
  const auto good = wire_->getattr(file);
  ASSERT_TRUE(good);
  EXPECT_EQ(good->status, Status::Ok);
  EXPECT_EQ(calls_of(procs(), nfs3_key(1)), 1) << describe(procs());
}

TEST_F(HostileInput, HandlesOfARemovedExportAreStaleAndNeverReachTheOrigin) {
  auto& s = setup();
  const nfs3::FileHandle gone_root = must_mnt("/gone");
  const nfs3::FileHandle gone_file = must_lookup(gone_root, "target");
  const nfs3::FileHandle plain_file = must_lookup(must_mnt("/plain"), "target");
  ASSERT_FALSE(gone_file.empty());
  // nfsgw again, with the same cache and secret, without "/gone".
  ASSERT_EQ(s.gateway->stop(), 0) << s.gateway->log();
  s.gateway = std::make_unique<Gateway>(gateway_config(/*without_gone=*/true), s.dir->sub("gw"));
  s.gateway->start();
  wire_ = std::make_unique<Wire>(kHostileGatewayPort);
  ASSERT_TRUE(wire_->connected());
  reset_relay();
  for (const auto& h : {gone_root, gone_file}) {
    const auto r = wire_->getattr(h);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, Status::Stale) << nfs3::status_name(r->status);
    const auto l = wire_->lookup(h, "target");
    ASSERT_TRUE(l);
    EXPECT_EQ(l->status, Status::Stale);
  }
  EXPECT_EQ(nfs3_calls(procs()), 0) << describe(procs());
  // Positive control: a handle of an export that stayed still works and is counted.
  const auto r = wire_->getattr(plain_file);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, Status::Ok);
  EXPECT_EQ(calls_of(procs(), nfs3_key(1)), 1) << describe(procs());
  // Put the full configuration back for the other tests.
  ASSERT_EQ(s.gateway->stop(), 0) << s.gateway->log();
  s.gateway = std::make_unique<Gateway>(gateway_config(), s.dir->sub("gw"));
  s.gateway->start();
}

// ---- ".." at the root of a subfolder export ----------------------------------------

TEST_F(HostileInput, DotDotAtTheRootOfASubfolderExportStaysThere) {
  const nfs3::FileHandle root = must_mnt("/sub");
  ASSERT_FALSE(root.empty());
  const auto root_attr = wire_->getattr(root);
  ASSERT_TRUE(root_attr && root_attr->status == Status::Ok);
  ASSERT_FALSE(must_lookup(root, "inner").empty()) << "the export is not the origin's subfolder";

  const auto up = wire_->lookup(root, "..");
  ASSERT_TRUE(up && up->status == Status::Ok);
  EXPECT_EQ(up->object, root) << "LOOKUP .. at the export root left it";
  // From below, ".." twice: the root, then the root again.
  const nfs3::FileHandle deeper = must_lookup(root, "deeper");
  const auto parent = wire_->lookup(deeper, "..");
  ASSERT_TRUE(parent && parent->status == Status::Ok);
  EXPECT_EQ(parent->object, root);
  const auto again = wire_->lookup(parent->object, "..");
  ASSERT_TRUE(again && again->status == Status::Ok);
  EXPECT_EQ(again->object, root);
  ASSERT_TRUE(again->obj_attributes);
  EXPECT_EQ(again->obj_attributes->fileid, root_attr->attributes.fileid);
  // The origin's export root (with "file" and "big") is never reached.
  const auto big = wire_->lookup(again->object, "big");
  ASSERT_TRUE(big);
  EXPECT_NE(big->status, Status::Ok);

  // READDIRPLUS of the root: its ".." entry is the root.
  nfs3::ReaddirplusArgs a;
  a.dir = root;
  a.dircount = 4096;
  a.maxcount = 16384;
  const auto list = wire_->nfs<nfs3::ReaddirplusRes>(nfs3::Proc::Readdirplus, a);
  ASSERT_TRUE(list && list->status == Status::Ok);
  bool found = false;
  for (const auto& e : list->entries) {
    if (e.name != ".." || !e.name_handle) continue;
    found = true;
    EXPECT_EQ(*e.name_handle, root) << "READDIRPLUS's .. of the export root leads outside it";
  }
  EXPECT_TRUE(found) << "the origin listed no .. with a handle";
}

}  // namespace

// ---- retransmissions: the duplicate request cache ------------------------------------

namespace {

std::vector<std::uint8_t> remove_record(std::uint32_t xid, const nfs3::FileHandle& dir, const std::string& name) {
  XdrOut x = rpc_call(xid, nfs3::kProgram, nfs3::kVersion, static_cast<std::uint32_t>(nfs3::Proc::Remove));
  std::vector<std::uint8_t> args;
  xdr::Writer w(args);
  encode(w, nfs3::RemoveArgs{{dir, name}});
  x.bytes.insert(x.bytes.end(), args.begin(), args.end());
  return record(x.bytes);
}

/// The REMOVE status of the next reply on `c`, which must carry `xid`; ~0u when
/// there is none.
std::uint32_t remove_status(TcpConn& c, std::uint32_t xid) {
  const auto rec = c.read_record(30000);
  if (!rec) return ~0u;
  const ParsedReply rep = parse_reply(*rec);
  if (!rep.ok || rep.xid != xid || rep.reply_stat != 0 || rep.accept_stat != 0) return ~0u;
  xdr::Reader r(rep.results);
  return r.u32();
}

}  // namespace

TEST_F(HostileInput, ARetransmittedRemoveGetsTheFirstAnswerAndReachesTheOriginOnce) {
  const std::string root = setup().origin->export_dir();
  make_dirs(root + "/drc");
  ASSERT_EQ(::chmod((root + "/drc").c_str(), 0777), 0);  // the squashed caller may remove here
  std::uint32_t xid = 0x5eed0000;
  for (const std::string exp : {"/plain", "/export"}) {
    SCOPED_TRACE(exp);
    const std::string name = "victim" + std::string(exp == "/plain" ? "-plain" : "-cached");
    write_file(root + "/drc/" + name, "x");
    const nfs3::FileHandle dir = must_lookup(must_mnt(exp), "drc");
    ASSERT_FALSE(dir.empty());
    reset_relay();

    // The first call, then the same xid again on the same connection: the second
    // must not say NOENT.
    ++xid;
    TcpConn first(kHostileGatewayPort);
    ASSERT_TRUE(first.send_all(remove_record(xid, dir, name)));
    EXPECT_EQ(remove_status(first, xid), static_cast<std::uint32_t>(Status::Ok));
    ASSERT_TRUE(first.send_all(remove_record(xid, dir, name)));
    EXPECT_EQ(remove_status(first, xid), static_cast<std::uint32_t>(Status::Ok)) << "retransmission, same connection";
    // After a reconnect (another source port, same address).
    TcpConn again(kHostileGatewayPort);
    ASSERT_TRUE(again.send_all(remove_record(xid, dir, name)));
    EXPECT_EQ(remove_status(again, xid), static_cast<std::uint32_t>(Status::Ok)) << "retransmission after a reconnect";
    EXPECT_EQ(calls_of(procs(), nfs3_key(12)), 1) << "one REMOVE reaches the origin: " << describe(procs());

    // A duplicate sent while the first is still in flight waits for its answer.
    write_file(root + "/drc/" + name, "x");
    ++xid;
    TcpConn both(kHostileGatewayPort);
    auto twice = remove_record(xid, dir, name);
    const auto one = twice;
    twice.insert(twice.end(), one.begin(), one.end());
    ASSERT_TRUE(both.send_all(twice));
    EXPECT_EQ(remove_status(both, xid), static_cast<std::uint32_t>(Status::Ok));
    EXPECT_EQ(remove_status(both, xid), static_cast<std::uint32_t>(Status::Ok)) << "duplicate in flight";
    EXPECT_EQ(calls_of(procs(), nfs3_key(12)), 2) << describe(procs());

    // Control: a new call (new xid) for the same name is executed, and the file is
    // gone.
    ++xid;
    ASSERT_TRUE(again.send_all(remove_record(xid, dir, name)));
    EXPECT_EQ(remove_status(again, xid), static_cast<std::uint32_t>(Status::NoEnt));
    EXPECT_EQ(calls_of(procs(), nfs3_key(12)), 3) << describe(procs());
  }
}
