// Issue 18's faults 1 and 5, against a real ganesha origin with raw NFSv3 clients:
//  - under consistency "strict", no attributes nfsgw returns are older than the
//    origin's answer at that moment, in whatever reply they come: after changes
//    made directly at the origin, the attributes each procedure carries are
//    compared with the origin's GETATTR of the same object right after it;
//  - ".." at the root of an export of a subfolder has one identity: the ".."
//    entries of READDIR and READDIRPLUS carry the root's own fileid (and handle
//    and attributes), whether the listing comes from the cache or the origin,
//    and nothing about the directory above the export.
// Changes "directly at the origin" go through ganesha's own NFS service (a client
// of ganesha, not of nfsgw), so that ganesha itself answers with them at once.
// The tree is made on the origin's disk before ganesha or nfsgw has seen it.
//
// Own ports (30100-30102): its own origin and gateway.
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/raw_steps.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

constexpr std::uint16_t kOriginNfsPort = 30100;
constexpr std::uint16_t kOriginMountPort = 30101;
constexpr std::uint16_t kGatewayPort = 30102;

constexpr std::size_t kFileBytes = 5000;

struct Setup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<Gateway> gateway;
};

Setup& setup() {
  static Setup s;
  return s;
}

/// The origin URL of a folder below the origin's export.
std::string origin_below(const std::string& rel) {
  std::string url = setup().origin->url();
  return url.insert(url.find('?'), "/" + rel);
}

/// /strict: consistency "strict", every window at its default (data cache on).
/// /sub and /subplain: the same subfolder of the origin's export, cached (the
/// defaults) and forwarded (both caches off).
GatewayConfig gateway_config() {
  GatewayConfig cfg;
  cfg.port = kGatewayPort;
  cfg.export_path = "/strict";
  cfg.origin_url = origin_below("strict");
  cfg.metadata.consistency = "strict";
  ExportSettings sub;
  sub.export_path = "/sub";
  sub.origin_url = origin_below("sub");
  ExportSettings plain = sub;
  plain.export_path = "/subplain";
  plain.metadata.enabled = false;
  plain.data_cache = false;
  cfg.extra_exports = {sub, plain};
  return cfg;
}

class StrictRootEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!nfsgw_binary()) return;  // each test fails on its own (INTEG_REQUIRE_NFSGW)
    auto& s = setup();
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kOriginNfsPort, kOriginMountPort);
      s.origin->start();
      const std::string root = s.origin->export_dir();
      make_dirs(root + "/strict/d/s");
      write_text_file(root + "/strict/d/f", std::string(kFileBytes, 'x'));
      make_dirs(root + "/sub/deeper");
      write_text_file(root + "/sub/inner", "inside");
      if (::symlink("f", (root + "/strict/d/l").c_str()) != 0) throw std::runtime_error("cannot make the symlink");
      s.dir = std::make_unique<TempDir>("strict_root");
      s.gateway = std::make_unique<Gateway>(gateway_config(), s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }

  void TearDown() override {
    auto& s = setup();
    if (s.gateway && s.gateway->running()) {
      EXPECT_EQ(s.gateway->stop(), 0) << s.gateway->log();
    }
    s.gateway.reset();
    s.dir.reset();
    s.origin.reset();
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new StrictRootEnvironment);

class StrictRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    INTEG_REQUIRE_NFSGW();
    ASSERT_TRUE(setup().gateway && setup().gateway->running()) << "the environment did not start";
  }

  /// MNT at the gateway (`port` kGatewayPort) or the origin: the root handle.
  static Handle root_of(std::uint16_t mount_port, const std::string& path) {
    const auto m = mount_root(mount_port, path);
    EXPECT_TRUE(m.transport_ok && m.status == 0) << "MNT " << path << ": " << m.error << " status " << m.status;
    return m.root;
  }
};

// ---- fault 1: strict answers carry nothing older than the origin's --------------

/// The attributes one reply carried, each named for the failure message.
using Carried = std::vector<std::pair<std::string, std::optional<RawFattr>>>;

/// A procedure as a client sends it, against one connection, with the handles of
/// one side (the gateway's or the origin's).
struct Handles {
  Handle d, f, s, l;
};
struct Probe {
  std::string name;
  std::function<Carried(RawNfsConnection&, const Handles&)> call;
};

/// Every procedure the raw client has that carries attributes, on the objects the
/// origin changes (f, s, l) and their directory d.
std::vector<Probe> probes() {
  auto lookup = [](const std::string& name) {
    return Probe{"LOOKUP " + name, [name](RawNfsConnection& c, const Handles& h) -> Carried {
                   const auto r = c.lookup(h.d, name);
                   EXPECT_EQ(r.status, kNfs3Ok) << "LOOKUP " << name << " " << r.error;
                   return {{"obj_attributes", r.attr}, {"dir_attributes", r.dir_attr}};
                 }};
  };
  auto fs = [](const std::string& what, Handle Handles::*obj) {
    return std::vector<Probe>{
        {"FSSTAT " + what,
         [obj](RawNfsConnection& c, const Handles& h) -> Carried { return {{"obj_attributes", c.fsstat(h.*obj).attr}}; }},
        {"FSINFO " + what,
         [obj](RawNfsConnection& c, const Handles& h) -> Carried { return {{"obj_attributes", c.fsinfo(h.*obj).attr}}; }},
        {"PATHCONF " + what, [obj](RawNfsConnection& c, const Handles& h) -> Carried {
           return {{"obj_attributes", c.pathconf(h.*obj).attr}};
         }}};
  };
  std::vector<Probe> out = {
      lookup("f"),
      lookup("s"),
      lookup("l"),
      {"GETATTR f",
       [](RawNfsConnection& c, const Handles& h) -> Carried {
         const auto r = c.getattr(h.f);
         return {{"attributes", r.status == kNfs3Ok ? std::optional<RawFattr>(r.attr) : std::nullopt}};
       }},
      {"ACCESS f", [](RawNfsConnection& c, const Handles& h) -> Carried { return {{"obj_attributes", c.access(h.f).attr}}; }},
      {"ACCESS s", [](RawNfsConnection& c, const Handles& h) -> Carried { return {{"obj_attributes", c.access(h.s).attr}}; }},
      {"READLINK l",
       [](RawNfsConnection& c, const Handles& h) -> Carried {
         const auto r = c.readlink(h.l);
         EXPECT_EQ(r.target, "f");
         return {{"symlink_attributes", r.attr}};
       }},
      {"READ f",
       [](RawNfsConnection& c, const Handles& h) -> Carried { return {{"file_attributes", c.read(h.f, 0, 4096).attr}}; }},
      {"READDIR d",
       [](RawNfsConnection& c, const Handles& h) -> Carried { return {{"dir_attributes", c.readdir_all(h.d).dir_attr}}; }},
      {"READDIRPLUS d",
       [](RawNfsConnection& c, const Handles& h) -> Carried {
         const auto r = c.readdirplus_all(h.d);
         Carried out{{"dir_attributes", r.dir_attr}};
         for (const auto& e : r.entries) out.emplace_back("name_attributes of " + e.name, e.attr);
         return out;
       }},
  };
  for (auto& p : fs("f", &Handles::f)) out.push_back(std::move(p));
  for (auto& p : fs("s", &Handles::s)) out.push_back(std::move(p));
  return out;
}

TEST_F(StrictRoot, NoStrictReplyCarriesAttributesOlderThanTheOrigins) {
  auto gw = connect_nfs(kGatewayPort);
  auto origin = connect_nfs(kOriginNfsPort);
  ASSERT_TRUE(gw && origin);
  const Handle gw_root = root_of(kGatewayPort, "/strict");
  const Handle origin_root = root_of(kOriginMountPort, setup().origin->export_dir() + "/strict");
  ASSERT_FALSE(gw_root.empty() || origin_root.empty());
  auto handles = [](RawNfsConnection& c, const Handle& root) {
    Handles h;
    h.d = must_lookup(c, root, "d");
    h.f = must_lookup(c, h.d, "f");
    h.s = must_lookup(c, h.d, "s");
    h.l = must_lookup(c, h.d, "l");
    return h;
  };
  const Handles at_gw = handles(*gw, gw_root);
  const Handles at_origin = handles(*origin, origin_root);
  ASSERT_FALSE(::testing::Test::HasFailure());

  // Whatever nfsgw can cache is cached: every probe once.
  const std::vector<Probe> all = probes();
  for (const auto& p : all) p.call(*gw, at_gw);

  std::uint64_t appended = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Probe& p = all[i];
    SCOPED_TRACE(p.name);
    // Changes at the origin that leave d as it is (so that nfsgw's lookups and
    // listing of d stay usable): f grows and changes mode, s changes mode, l
    // changes owner.
    const bool odd = i % 2 == 1;
    ASSERT_EQ(origin->write(at_origin.f, kFileBytes + appended, std::string(1000, 'y')).status, kNfs3Ok);
    appended += 1000;
    RawSetattr f_mode, s_mode, l_owner;
    f_mode.mode = odd ? 0644u : 0600u;
    s_mode.mode = odd ? 0755u : 0700u;
    l_owner.uid = odd ? 0u : 1000u;
    ASSERT_EQ(origin->setattr(at_origin.f, f_mode).status, kNfs3Ok);
    ASSERT_EQ(origin->setattr(at_origin.s, s_mode).status, kNfs3Ok);
    ASSERT_EQ(origin->setattr(at_origin.l, l_owner).status, kNfs3Ok);

    const Carried carried = p.call(*gw, at_gw);
    // What the origin says now of every object a reply can carry.
    std::map<std::uint64_t, RawFattr> now;
    for (const Handle* h : {&origin_root, &at_origin.d, &at_origin.f, &at_origin.s, &at_origin.l}) {
      const RawFattr a = must_getattr(*origin, *h, "origin");
      now[a.fileid] = a;
    }
    for (const auto& [what, attr] : carried) {
      if (!attr) continue;  // left out: the client asks GETATTR
      const auto truth = now.find(attr->fileid);
      ASSERT_NE(truth, now.end()) << what << " of an object outside the test: " << *attr;
      EXPECT_EQ(*attr, truth->second) << what << " through nfsgw is not what the origin says now";
    }
    // Positive control: the same call at the origin carries attributes, so the
    // client reads them and the comparison above is not empty by construction.
    bool any = false;
    for (const auto& [what, attr] : p.call(*origin, at_origin)) any = any || attr.has_value();
    EXPECT_TRUE(any) << "the origin's own reply carried no attributes";
  }
}

// ---- fault 5: ".." at the root of an export of a subfolder -----------------------

TEST_F(StrictRoot, DotDotAtTheRootOfASubfolderExportIsTheRootInEveryListing) {
  auto origin = connect_nfs(kOriginNfsPort);
  ASSERT_TRUE(origin);
  // The directory above the export: the origin's export root.
  const Handle above = root_of(kOriginMountPort, setup().origin->export_dir());
  ASSERT_FALSE(above.empty());
  const std::uint64_t above_fileid = must_getattr(*origin, above, "the origin's export root").fileid;
  // Positive control: the origin lists the directory above as ".." of the subfolder.
  bool origin_shows_above = false;
  for (const auto& e : origin->readdir_all(must_lookup(*origin, above, "sub")).entries)
    origin_shows_above = origin_shows_above || (e.name == ".." && e.fileid == above_fileid);
  ASSERT_TRUE(origin_shows_above) << "the origin's .. of sub is not its export root";

  auto gw = connect_nfs(kGatewayPort);
  ASSERT_TRUE(gw);
  // The cached export serves its listings from the cache from the second round on.
  for (const std::string exp : {"/sub", "/subplain"}) {
    const Handle root = root_of(kGatewayPort, exp);
    ASSERT_FALSE(root.empty());
    const RawFattr root_attr = must_getattr(*gw, root, exp + " root");
    ASSERT_NE(root_attr.fileid, above_fileid);
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE(exp + " round " + std::to_string(round));
      const auto plus = gw->readdirplus_all(root);
      ASSERT_EQ(plus.status, kNfs3Ok) << plus.error;
      bool dotdot = false, inner = false;
      for (const auto& e : plus.entries) {
        inner = inner || e.name == "inner";
        EXPECT_NE(e.fileid, above_fileid) << "READDIRPLUS entry " << e.name << " is the directory above";
        if (e.attr) {
          EXPECT_NE(e.attr->fileid, above_fileid) << "READDIRPLUS entry " << e.name << "'s attributes";
        }
        if (e.name != "..") continue;
        dotdot = true;
        EXPECT_EQ(e.fileid, root_attr.fileid) << "READDIRPLUS .. of the export root is not the root";
        if (!e.handle.empty()) {
          EXPECT_EQ(e.handle, root) << "READDIRPLUS .. of the export root leads elsewhere";
        }
        if (e.attr) {
          EXPECT_EQ(e.attr->fileid, root_attr.fileid) << "READDIRPLUS .. of the export root has others' attributes";
        }
      }
      EXPECT_TRUE(dotdot) << "no .. listed";
      EXPECT_TRUE(inner) << "the export is not the subfolder";

      const auto plain = gw->readdir_all(root);
      ASSERT_EQ(plain.status, kNfs3Ok) << plain.error;
      dotdot = false;
      for (const auto& e : plain.entries) {
        EXPECT_NE(e.fileid, above_fileid) << "READDIR entry " << e.name << " is the directory above";
        if (e.name != "..") continue;
        dotdot = true;
        EXPECT_EQ(e.fileid, root_attr.fileid) << "READDIR .. of the export root is not the root";
      }
      EXPECT_TRUE(dotdot) << "no .. listed";
    }
    // Below the root, ".." is the root (the parent inside the export) as before.
    const Handle deeper = must_lookup(*gw, root, "deeper");
    for (const auto& e : gw->readdirplus_all(deeper).entries) {
      if (e.name != "..") continue;
      EXPECT_EQ(e.fileid, root_attr.fileid) << ".. of a folder below the root";
      if (!e.handle.empty()) {
        EXPECT_EQ(e.handle, root);
      }
    }
  }
}

}  // namespace
