// The object a REMOVE or RENAME unlinks is the origin's, not the cache's: a name
// given to another object on the origin inside the window must not leave that
// object's attributes (its link count, its ctime) older than the change made
// through nfsgw. Found by nfsgw-difftest (docs/difftest.md); an immutable export,
// whose tree changes only through nfsgw, keeps trusting its cached lookup.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class UnlinkedObject : public MetaCacheTest {
 protected:
  /// d/f cached as one file; then, on the origin, f becomes a second name of d/a.
  void name_reused_behind_the_cache() {
    settings.access_check = cache::AccessCheck::Local;
    settings.attr_ttl = settings.dir_ttl = 1h;
    start();
    d = origin.add_dir(origin.root(), "d");
    origin.add_file(d, "f", 0644);
    a = origin.add_file(d, "a", 0644);
    ASSERT_EQ(lookup(d, "f").status, Status::Ok);
    ASSERT_EQ(getattr(a).attributes.nlink, 1u);
    origin.unlink(d, "f");
    run(invoke(origin, &Nfs3Program::link, as(0), nfs3::LinkArgs{a, {d, "f"}}));
    origin.reset_calls();
  }
  nfs3::FileHandle d, a;
};

TEST_F(UnlinkedObject, RemovingANameTheOriginGaveAnotherObjectLeavesNoStaleAttributes) {
  name_reused_behind_the_cache();
  ASSERT_EQ(remove(d, "f").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);  // the object behind the name, asked first
  const auto now = getattr(a);
  EXPECT_EQ(now.attributes.nlink, 1u);
  EXPECT_EQ(now.attributes.ctime, origin.attributes(a).ctime);
}

TEST_F(UnlinkedObject, RenamingOverANameTheOriginGaveAnotherObjectLeavesNoStaleAttributes) {
  name_reused_behind_the_cache();
  origin.add_file(d, "tmp", 0644);
  ASSERT_EQ(rename(d, "tmp", d, "f").status, Status::Ok);
  const auto now = getattr(a);
  EXPECT_EQ(now.attributes.nlink, 1u);
  EXPECT_EQ(now.attributes.ctime, origin.attributes(a).ctime);
}

TEST_F(UnlinkedObject, AnImmutableExportTrustsItsCachedLookup) {
  settings.consistency = cache::Consistency::Immutable;
  name_reused_behind_the_cache();
  ASSERT_EQ(remove(d, "f").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
}

// A RENAME onto another name of the same object changes nothing at the origin
// (POSIX), so the cache must know which objects the names stand for before it
// edits its listings in place. When a LOOKUP before the RENAME is refused or not
// answered, it does not know: nothing may be edited, and both names stay listed.
// (ganesha answers a RENAME between two names of one file OK to a caller whose
// LOOKUP it refuses: found by nfsgw-difftest, seed 3.)
class RenameWithoutKnownNames : public MetaCacheTest {
 protected:
  void SetUp() override {
    settings.access_check = cache::AccessCheck::Local;
    settings.attr_ttl = settings.dir_ttl = 1h;
    start();
    d1 = origin.add_dir(origin.root(), "d1");
    d2 = origin.add_dir(origin.root(), "d2");
    file = origin.add_file(d1, "f", 0644);
    run(invoke(origin, &Nfs3Program::link, as(0), nfs3::LinkArgs{file, {d2, "g"}}));
    // Everything cached: both listings, both names.
    ASSERT_EQ(list(d1), std::vector<std::string>{"f"});
    ASSERT_EQ(list(d2), std::vector<std::string>{"g"});
    ASSERT_EQ(lookup(d1, "f").status, Status::Ok);
    ASSERT_EQ(lookup(d2, "g").status, Status::Ok);
    origin.reset_calls();
  }
  void both_names_stay() {
    EXPECT_EQ(list(d1), std::vector<std::string>{"f"});
    EXPECT_EQ(list(d2), std::vector<std::string>{"g"});
    EXPECT_EQ(lookup(d1, "f").status, Status::Ok);
    EXPECT_EQ(lookup(d2, "g").status, Status::Ok);
  }
  nfs3::FileHandle d1, d2, file;
};

TEST_F(RenameWithoutKnownNames, TheFromLookupUnanswered) {
  origin.fail(Proc::Lookup, 1);
  ASSERT_EQ(rename(d1, "f", d2, "g").status, Status::Ok);
  both_names_stay();
}

TEST_F(RenameWithoutKnownNames, TheToLookupRefusedByTheOrigin) {
  origin.fail_later(Proc::Lookup, 1, 1, Status::Acces, /*made_up=*/false);
  ASSERT_EQ(rename(d1, "f", d2, "g").status, Status::Ok);
  both_names_stay();
}

TEST_F(RenameWithoutKnownNames, BothLookupsAnsweredIsTheControl) {
  ASSERT_EQ(rename(d1, "f", d2, "g").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);
  both_names_stay();
  // Known to be one object: the listings were kept, not read again.
  EXPECT_EQ(origin.calls(Proc::Readdirplus) + origin.calls(Proc::Readdir), 0u);
}

TEST_F(RenameWithoutKnownNames, ARealMoveAfterAnUnansweredLookupIsSeen) {
  ASSERT_EQ(create(d1, "h").status, Status::Ok);
  ASSERT_EQ(list(d1), (std::vector<std::string>{"f", "h"}));
  origin.fail(Proc::Lookup, 1);
  ASSERT_EQ(rename(d1, "h", d2, "h").status, Status::Ok);
  EXPECT_EQ(list(d1), std::vector<std::string>{"f"});
  EXPECT_EQ(list(d2), (std::vector<std::string>{"g", "h"}));
  EXPECT_EQ(lookup(d1, "h").status, Status::NoEnt);
}

// A file removed at the origin behind the cache: any call the origin answers STALE
// about it drops its records, so an export that never asks on its own (immutable)
// does not answer its old attributes for ever. Found by nfsgw-difftest (CI seed 1):
// the write-back flusher's WRITE of a dirty file removed at the origin was answered
// STALE, the file's dirty state went, and /imm then answered the attributes cached
// before the flush.
class GoneAtTheOrigin : public MetaCacheTest {
 protected:
  void SetUp() override {
    settings.consistency = cache::Consistency::Immutable;
    settings.access_check = cache::AccessCheck::Local;
    start();
    d = origin.add_dir(origin.root(), "d");
    f = origin.add_file(d, "f", 0644);
    ASSERT_EQ(getattr(f).status, Status::Ok);
    origin.unlink(d, "f");
    ASSERT_EQ(run(invoke(origin, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f})).status, Status::Stale);
    // The control: the cache alone still answers it.
    ASSERT_EQ(getattr(f).status, Status::Ok);
  }
  void forgotten() {
    origin.reset_calls();
    EXPECT_EQ(getattr(f).status, Status::Stale);
    EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  }
  nfs3::FileHandle d, f;
};

TEST_F(GoneAtTheOrigin, AWriteAnsweredStaleDropsTheRecords) {
  ASSERT_EQ(write(f, 0, "abc").status, Status::Stale);
  forgotten();
}

TEST_F(GoneAtTheOrigin, ACommitAnsweredStaleDropsTheRecords) {
  ASSERT_EQ(run(invoke(*layer, &Nfs3Program::commit, as(0), nfs3::CommitArgs{f, 0, 0})).status, Status::Stale);
  forgotten();
}

TEST_F(GoneAtTheOrigin, ASetattrAnsweredStaleDropsTheRecords) {
  ASSERT_EQ(chmod(f, 0600).status, Status::Stale);
  forgotten();
}

TEST_F(GoneAtTheOrigin, AReadAnsweredStaleDropsTheRecords) {
  ASSERT_EQ(run(invoke(*layer, &Nfs3Program::read, as(0), nfs3::ReadArgs{f, 0, 100})).status, Status::Stale);
  forgotten();
}

TEST_F(GoneAtTheOrigin, AnAccessAnsweredStaleDropsTheRecords) {
  // (uid 0 always asks the origin.)
  ASSERT_EQ(run(invoke(*layer, &Nfs3Program::access, as(0), nfs3::AccessArgs{f, nfs3::access::Read})).status,
            Status::Stale);
  forgotten();
}


// The class of the fault above: whatever procedure the origin answers STALE about
// an object (the object itself, or the directory a name lives in), nothing cached
// of that object answers again. Every procedure that carries a handle is tried,
// each on an object of its own (a file, a directory or a symlink cached on an
// immutable export, then removed at the origin behind the cache); a procedure the
// cache answers without the origin learns nothing and is counted apart. A
// procedure that passes the origin's STALE on but keeps the records fails here.
class GoneAtTheOriginEveryProcedure : public MetaCacheTest {
 protected:
  void SetUp() override {
    settings.consistency = cache::Consistency::Immutable;
    settings.access_check = cache::AccessCheck::Local;
    start();
    root = origin.root();
  }
  enum class Kind { File, Dir, Symlink };
  /// A fresh object of `kind` in a folder of its own, cached (its attributes, its
  /// name, and for a folder a name inside it), then removed at the origin.
  nfs3::FileHandle gone(Kind kind, const std::string& tag) {
    const nfs3::FileHandle d = origin.add_dir(root, "d-" + tag);
    nfs3::FileHandle x;
    switch (kind) {
      case Kind::File: x = origin.add_file(d, "x", 0666); break;
      case Kind::Dir: x = origin.add_dir(d, "x", 0777); origin.add_file(x, "inside", 0644); break;
      case Kind::Symlink: x = origin.add_symlink(d, "x", "target"); break;
    }
    EXPECT_EQ(lookup(d, "x").status, Status::Ok);
    EXPECT_EQ(getattr(x).status, Status::Ok);
    if (kind == Kind::Dir) EXPECT_EQ(lookup(x, "inside").status, Status::Ok);
    origin.unlink(d, "x");
    EXPECT_EQ(getattr(x).status, Status::Ok) << "control: the cache alone still answers it";
    return x;
  }
  /// Nothing of `x` answers from the cache any more: its GETATTR asks the origin.
  bool forgotten(const nfs3::FileHandle& x) {
    origin.reset_calls();
    const Status s = getattr(x).status;
    return s == Status::Stale && origin.calls(Proc::Getattr) == 1;
  }
  nfs3::FileHandle root;
};

TEST_F(GoneAtTheOriginEveryProcedure, NoProcedureAnsweredStaleLeavesTheObjectsRecordsBehind) {
  using Call = std::function<Status(const nfs3::FileHandle& x, const nfs3::FileHandle& alive)>;
  struct Case {
    const char* name;
    Kind kind;
    Call call;
  };
  auto r = [this](auto method, auto args) { return run(invoke(*layer, method, as(0), std::move(args))).status; };
  nfs3::Sattr mode;
  mode.mode = 0600;
  const std::vector<Case> cases = {
      {"SETATTR", Kind::File, [&](auto& x, auto&) { return r(&Nfs3Program::setattr, nfs3::SetattrArgs{x, mode, {}}); }},
      {"ACCESS", Kind::File,
       [&](auto& x, auto&) { return r(&Nfs3Program::access, nfs3::AccessArgs{x, nfs3::access::Read}); }},
      {"READLINK", Kind::Symlink, [&](auto& x, auto&) { return r(&Nfs3Program::readlink, nfs3::ReadlinkArgs{x}); }},
      {"READ", Kind::File, [&](auto& x, auto&) { return r(&Nfs3Program::read, nfs3::ReadArgs{x, 0, 10}); }},
      {"WRITE", Kind::File, [&](auto& x, auto&) { return write(x, 0, "abc").status; }},
      {"COMMIT", Kind::File, [&](auto& x, auto&) { return r(&Nfs3Program::commit, nfs3::CommitArgs{x, 0, 0}); }},
      {"LINK of it", Kind::File,
       [&](auto& x, auto& alive) { return r(&Nfs3Program::link, nfs3::LinkArgs{x, {alive, "l"}}); }},
      {"FSSTAT", Kind::File, [&](auto& x, auto&) { return r(&Nfs3Program::fsstat, nfs3::FsstatArgs{x}); }},
      {"FSINFO", Kind::File, [&](auto& x, auto&) { return r(&Nfs3Program::fsinfo, nfs3::FsinfoArgs{x}); }},
      {"PATHCONF", Kind::File, [&](auto& x, auto&) { return r(&Nfs3Program::pathconf, nfs3::PathconfArgs{x}); }},
      {"LOOKUP in it", Kind::Dir, [&](auto& x, auto&) { return lookup(x, "never-cached").status; }},
      {"CREATE in it", Kind::Dir, [&](auto& x, auto&) { return create(x, "n").status; }},
      {"MKDIR in it", Kind::Dir, [&](auto& x, auto&) { return mkdir(x, "n").status; }},
      {"SYMLINK in it", Kind::Dir,
       [&](auto& x, auto&) { return r(&Nfs3Program::symlink, nfs3::SymlinkArgs{{x, "n"}, {}, "t"}); }},
      {"MKNOD in it", Kind::Dir,
       [&](auto& x, auto&) {
         nfs3::MknodArgs a;
         a.where = {x, "n"};
         a.type = nfs3::FileType::Fifo;
         return r(&Nfs3Program::mknod, std::move(a));
       }},
      {"REMOVE in it", Kind::Dir, [&](auto& x, auto&) { return remove(x, "inside").status; }},
      {"RMDIR in it", Kind::Dir, [&](auto& x, auto&) { return rmdir(x, "inside").status; }},
      {"RENAME from it", Kind::Dir, [&](auto& x, auto& alive) { return rename(x, "inside", alive, "moved").status; }},
      {"RENAME into it", Kind::Dir, [&](auto& x, auto& alive) { return rename(alive, "a", x, "moved").status; }},
      {"LINK into it", Kind::Dir,
       [&](auto& x, auto& alive) {
         const nfs3::FileHandle a = lookup(alive, "a").object;
         return r(&Nfs3Program::link, nfs3::LinkArgs{a, {x, "l"}});
       }},
      {"READDIR", Kind::Dir,
       [&](auto& x, auto&) { return readdir(x).status; }},
      {"READDIRPLUS", Kind::Dir, [&](auto& x, auto&) { return readdirplus(x).status; }},
  };
  int stale = 0, from_cache = 0;
  int n = 0;
  for (const Case& c : cases) {
    const std::string tag = std::to_string(n++);
    const nfs3::FileHandle alive = origin.add_dir(root, "alive-" + tag);
    origin.add_file(alive, "a", 0644);
    const nfs3::FileHandle x = gone(c.kind, tag);
    origin.reset_calls();
    const Status s = c.call(x, alive);
    if (s != Status::Stale) {
      // Answered without the origin's word on it (from the cache, or an error of
      // its own): nothing was learned, nothing to forget.
      ++from_cache;
      continue;
    }
    ++stale;
    EXPECT_TRUE(forgotten(x)) << c.name << " was answered STALE by the origin, yet the cache still answers "
                              << "the object's GETATTR";
  }
  // Most procedures reach the origin here: the test checks what it is for.
  EXPECT_GE(stale, 18) << from_cache << " answered without the origin";
}

}  // namespace
}  // namespace nfsgw::metacache::test
