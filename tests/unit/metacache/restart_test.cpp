// Records outlive a restart: written through one MetadataStore over RocksDB, read
// by a new store and a new layer after the database was closed and reopened. An
// entry still inside its window is served without the origin.
#include <stdlib.h>

#include <filesystem>

#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class RestartTest : public MetaCacheTest {
 protected:
  RestartTest() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "nfsgw_metacache_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~RestartTest() override {
    close_layer();
    kv.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void open() {
    kv = cache::open_rocksdb_store(dir_, 8, cache::metadata_families());
    open_layer();
  }
  /// Closes everything and opens it again a second later (the layer's sequence
  /// starts from the clock).
  void restart() {
    store->flush();
    close_layer();
    kv.reset();
    clock.advance(1'000);
    open();
  }

  std::string dir_;
};

TEST_F(RestartTest, ANewLayerServesInsideTheWindowWithoutTheOrigin) {
  open();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "f", 0644, 0, 0, "12345");
  const auto l = origin.add_symlink(d, "l", "f");
  ASSERT_EQ(access(d, nfs3::access::Read | nfs3::access::Lookup).status, Status::Ok);
  ASSERT_EQ(access(l, nfs3::access::Read).status, Status::Ok);
  ASSERT_EQ(list(d), (std::vector<std::string>{"f", "l"}));
  ASSERT_EQ(lookup(d, "missing").status, Status::NoEnt);
  ASSERT_EQ(readlink(l).data, "f");
  ASSERT_EQ(fsinfo(origin.root()).status, Status::Ok);

  restart();
  clock.advance(2'000);
  origin.reset_calls();
  EXPECT_EQ(getattr(f).attributes.size, 5u);
  EXPECT_EQ(lookup(d, "f").object, f);
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(list(d), (std::vector<std::string>{"f", "l"}));
  EXPECT_EQ(readlink(l).data, "f");
  EXPECT_EQ(fsinfo(origin.root()).rtmax, 1u << 20);
  EXPECT_EQ(origin.total_calls(), 0u);

  // Past the window, the restored entries are revalidated like any other.
  clock.advance(20'000);
  EXPECT_EQ(getattr(f).attributes.size, 5u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  EXPECT_EQ(lookup(d, "f").object, f);
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
}

TEST_F(RestartTest, AChangeSeenAfterTheRestartReplacesWhatWasStored) {
  open();
  const auto f = origin.add_file(origin.root(), "f");
  ASSERT_EQ(getattr(f).attributes.size, 0u);
  restart();
  origin.append(f);
  clock.advance(10'000);
  EXPECT_EQ(getattr(f).attributes.size, 1u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
  restart();
  origin.reset_calls();
  EXPECT_EQ(getattr(f).attributes.size, 1u);
  EXPECT_EQ(origin.total_calls(), 0u);
}

// After a restart every record is only on disk: the answer steps pass, and the
// coroutines bring the records into memory and answer as hits, asking nobody.
TEST_F(RestartTest, RecordsOnlyOnDiskAreHitsThroughTheCoroutines) {
  open();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "f", 0644, 0, 0, "12345");
  ASSERT_EQ(access(d, nfs3::access::Read | nfs3::access::Lookup).status, Status::Ok);
  ASSERT_EQ(access(f, nfs3::access::Read).status, Status::Ok);
  const auto found = lookup(d, "f");
  ASSERT_EQ(found.status, Status::Ok);
  ASSERT_EQ(lookup(d, "missing").status, Status::NoEnt);
  origin.reset_calls();
  const nfs3::LookupArgs lookup_f{nfs3::DirOpArgs{d, "f"}};
  const nfs3::LookupArgs lookup_missing{nfs3::DirOpArgs{d, "missing"}};

  // A restart before each call: what one call brings in would serve the next.
  restart();
  ASSERT_FALSE(layer->lookup_now(as(0), lookup_f));  // nothing in memory yet
  const auto again = lookup(d, "f");
  EXPECT_EQ(again.object, f);
  EXPECT_EQ(again.obj_attributes, found.obj_attributes);
  EXPECT_EQ(again.dir_attributes, found.dir_attributes);
  EXPECT_EQ(layer->counters().get(Proc::Lookup).hits, 1u);

  restart();
  ASSERT_FALSE(layer->lookup_now(as(0), lookup_missing));
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(layer->counters().get(Proc::Lookup).hits, 1u);

  restart();
  ASSERT_FALSE(layer->access_now(as(0), nfs3::AccessArgs{f, nfs3::access::Read}));
  EXPECT_EQ(access(f, nfs3::access::Read).access, nfs3::access::Read);
  EXPECT_EQ(layer->counters().get(Proc::Access).hits, 1u);

  restart();
  ASSERT_FALSE(layer->getattr_now(as(0), nfs3::GetattrArgs{f}));
  EXPECT_EQ(getattr(f).attributes.size, 5u);
  EXPECT_EQ(layer->counters().get(Proc::Getattr).hits, 1u);

  EXPECT_EQ(origin.total_calls(), 0u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
