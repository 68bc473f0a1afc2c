// No crash may bring back the state before a change made through nfsgw (issue 18,
// fault 2), as a property of every procedure that changes the file system: each
// one, in each way it can go, writes down in the change journal every object
// whose cached records it changes, before it answers. An object written to but
// not written down is one whose old records a kill -9 can bring back.
//
// The procedures come from the dispatch table's Mutates flag, so a new one without
// a case here fails the test.
#include <set>
#include <string>

#include "cache/change_journal.h"
#include "cache/metadata_codec.h"
#include "gateway/rpc/nfs3_procedure_info.h"
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

/// The in-memory store, recording the key of every change written to it.
class RecordingStore final : public cache::KvStore {
 public:
  explicit RecordingStore(std::unique_ptr<cache::KvStore> inner) : inner_(std::move(inner)) {}
  using cache::KvStore::get;
  Family family(std::string_view name) const override { return inner_->family(name); }
  Found get(Family f, std::string_view key, std::string& value, Tier tier) override {
    return inner_->get(f, key, value, tier);
  }
  void write(const Batch& batch, Durability d) override {
    {
      std::lock_guard lock(mu_);
      for (const auto& c : batch.changes) written_.emplace_back(c.family, c.key);
    }
    inner_->write(batch, d);
  }
  void scan(Family f, std::string_view begin, std::string_view end,
            const std::function<bool(std::string_view, std::string_view)>& visit) override {
    inner_->scan(f, begin, end, visit);
  }
  FamilyUsage usage(Family f) override { return inner_->usage(f); }

  std::vector<std::pair<Family, std::string>> take_written() {
    std::lock_guard lock(mu_);
    return std::exchange(written_, {});
  }

 private:
  std::unique_ptr<cache::KvStore> inner_;
  std::mutex mu_;
  std::vector<std::pair<Family, std::string>> written_;
};

/// The object a metadata key belongs to: its object prefix (export id, handle
/// length, handle), which every key of the object starts with.
std::string object_of(const std::string& key) {
  if (key.size() < 5) return key;
  return key.substr(0, 5 + static_cast<unsigned char>(key[4]));
}

class JournalCoverage : public MetaCacheTest {
 protected:
  void SetUp() override {
    auto families = cache::metadata_families();
    families.emplace_back(cache::change_journal_family());
    auto rec = std::make_unique<RecordingStore>(cache::make_memory_store(families));
    recording = rec.get();
    kv = std::move(rec);
    open_layer();
    cache::ChangeJournalOptions o;
    o.clock = &clock;  // never moved: nothing is crossed out during a test
    journal = std::make_unique<cache::ChangeJournal>(*kv, *store, o);
    layer->use_journal(journal.get());

    d = origin.add_dir(origin.root(), "d");
    d2 = origin.add_dir(origin.root(), "d2");
    f = origin.add_file(d, "f", 0644, 0, 0, "data");
    origin.add_file(d, "x", 0644, 0, 0, "x");
    origin.add_file(d2, "y", 0644, 0, 0, "y");
    origin.add_dir(d, "e");
    origin.add_symlink(d, "l", "f");
    // A second name of f, in a directory nfsgw never lists or looks into.
    s = origin.add_dir(origin.root(), "s");
    run(invoke(origin, &Nfs3Program::link, as(0), nfs3::LinkArgs{f, {s, "g"}}));
  }
  void TearDown() override {
    layer.reset();  // before the journal it uses
    journal.reset();
  }

  /// Caches what clients would: every name, attributes, listings, ACCESS.
  void warm() {
    for (const auto& dir : {origin.root(), d, d2}) {
      list(dir);
      access(dir, nfs3::access::Lookup | nfs3::access::Read);
      for (const auto& name : origin.names(dir)) {
        auto r = lookup(dir, name);
        ASSERT_EQ(r.status, Status::Ok) << name;
        getattr(r.object);
        access(r.object, nfs3::access::Read);
      }
    }
    readlink(origin.at("d/l"));
    getattr(s);
  }

  /// Runs `change` on a warm cache and checks the property; `what` names the case.
  void check(const std::string& what, const std::function<void()>& change) {
    SCOPED_TRACE(what);
    warm();
    settle();
    store->flush();
    std::set<std::string> had;  // objects with records before the change
    for (const auto& name : cache::metadata_families()) {
      kv->scan(kv->family(name), {}, {}, [&](std::string_view k, std::string_view) {
        had.insert(object_of(std::string(k)));
        return true;
      });
    }
    // Only this change's entries: what earlier ones wrote down is crossed out.
    journal->cross_out_now(true);
    recording->take_written();
    change();
    settle();
    store->flush();
    std::set<std::string> noted;
    kv->scan(kv->family(cache::change_journal_family()), {}, {}, [&](std::string_view k, std::string_view) {
      noted.insert(std::string(k));
      return true;
    });
    const auto journal_family = kv->family(cache::change_journal_family());
    int changed = 0;
    for (const auto& [family, key] : recording->take_written()) {
      if (family == journal_family) continue;
      const std::string obj = object_of(key);
      if (!had.count(obj)) continue;  // new: nothing older to bring back
      ++changed;
      EXPECT_TRUE(noted.count(obj)) << "records of an object changed without its being written down first"
                                    << " (family " << family << ", " << noted.size() << " written down"
                                    << (obj == cache::codec::object_prefix({kExport, f}) ? ", the file f)" : ")");
    }
    EXPECT_GT(changed, 0) << "the case changed no cached record: it checks nothing";
  }

  std::unique_ptr<cache::ChangeJournal> journal;
  RecordingStore* recording = nullptr;
  nfs3::FileHandle d, d2, f, s;
};

TEST_F(JournalCoverage, EveryChangeWritesDownEveryObjectWhoseRecordsItChanges) {
  std::set<Proc> covered;
  auto case_of = [&](Proc p, const std::string& what, const std::function<void()>& change) {
    covered.insert(p);
    check(what, change);
  };
  case_of(Proc::Setattr, "SETATTR mode", [&] { EXPECT_EQ(chmod(f, 0600).status, Status::Ok); });
  case_of(Proc::Write, "WRITE", [&] { EXPECT_EQ(write(f, 0, "new data").status, Status::Ok); });
  case_of(Proc::Commit, "COMMIT", [&] {
    EXPECT_EQ(run(invoke(*layer, &Nfs3Program::commit, as(0), nfs3::CommitArgs{f, 0, 0})).status, Status::Ok);
  });
  case_of(Proc::Create, "CREATE of a new name", [&] { EXPECT_EQ(create(d, "new").status, Status::Ok); });
  case_of(Proc::Create, "CREATE UNCHECKED of a cached file", [&] {
    nfs3::CreateArgs a;
    a.where = {d, "x"};
    a.mode = nfs3::CreateMode::Unchecked;
    EXPECT_EQ(run(invoke(*layer, &Nfs3Program::create, as(0), std::move(a))).status, Status::Ok);
  });
  case_of(Proc::Mkdir, "MKDIR", [&] { EXPECT_EQ(mkdir(d, "newdir").status, Status::Ok); });
  case_of(Proc::Symlink, "SYMLINK", [&] {
    nfs3::SymlinkArgs a;
    a.where = {d, "newlink"};
    a.symlink_data = "f";
    EXPECT_EQ(run(invoke(*layer, &Nfs3Program::symlink, as(0), std::move(a))).status, Status::Ok);
  });
  case_of(Proc::Mknod, "MKNOD", [&] {
    nfs3::MknodArgs a;
    a.where = {d, "fifo"};
    a.type = nfs3::FileType::Fifo;
    EXPECT_EQ(run(invoke(*layer, &Nfs3Program::mknod, as(0), std::move(a))).status, Status::Ok);
  });
  case_of(Proc::Remove, "REMOVE of a cached name", [&] { EXPECT_EQ(remove(d, "x").status, Status::Ok); });
  case_of(Proc::Remove, "REMOVE of a hard link never looked up", [&] {
    EXPECT_EQ(remove(s, "g").status, Status::Ok);
  });
  case_of(Proc::Rmdir, "RMDIR", [&] { EXPECT_EQ(rmdir(d, "e").status, Status::Ok); });
  case_of(Proc::Rename, "RENAME in one directory", [&] { EXPECT_EQ(rename(d, "f", d, "f2").status, Status::Ok); });
  case_of(Proc::Rename, "RENAME over a cached file in another directory",
          [&] { EXPECT_EQ(rename(d, "f2", d2, "y").status, Status::Ok); });
  case_of(Proc::Link, "LINK", [&] { EXPECT_EQ(link(f, d, "f3").status, Status::Ok); });

  for (const auto& info : rpc::kNfs3Procedures) {
    if ((info.flags & rpc::flags::Mutates) != 0) {
      EXPECT_TRUE(covered.count(info.proc)) << info.name << " has no case";
    }
  }
}

}  // namespace
}  // namespace nfsgw::metacache::test
