// A small in-memory NFSv3 file system standing in for the origin below the
// metadata cache: directories, regular files and symbolic links with POSIX mode
// bits, owners, sizes and times. Every change ticks a counter that becomes the
// mtime/ctime of what it changed, so WCC pre-op attributes tell exactly whether a
// directory changed between two calls. It answers what the cache sends (GETATTR,
// LOOKUP, ACCESS, READLINK, READDIR/READDIRPLUS with real paging, the changing
// calls with WCC data, FSINFO/PATHCONF/FSSTAT) and lets a test:
//  - count the calls per procedure;
//  - change the tree directly, "behind the gateway's back";
//  - make the next calls of a procedure fail with a status the gateway made up
//    (gateway_status, JUKEBOX by default);
//  - hold the calls of a procedure until released. A held call has been answered
//    already (the answer is taken when it arrives); only its reply is delayed.
#pragma once

#include <atomic>
#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gateway/nfs3_program.h"
#include "tests/unit/support/call_gates.h"

namespace nfsgw::metacache::test {

class FakeOrigin final : public Nfs3Program {
 public:
  static constexpr std::uint64_t kFsid = 0x5eed;
  static constexpr std::size_t kHandleSize = 16;

  FakeOrigin();

  // ---- the tree, changed directly (no call is counted) --------------------------
  nfs3::FileHandle root() const { return handle(kRootId); }
  nfs3::FileHandle handle(std::uint64_t fileid) const;
  /// The handle at `path` ("a/b/c", relative to the root); throws when absent.
  nfs3::FileHandle at(const std::string& path) const;

  nfs3::FileHandle add_dir(const nfs3::FileHandle& dir, const std::string& name, std::uint32_t mode = 0755,
                           std::uint32_t uid = 0, std::uint32_t gid = 0);
  nfs3::FileHandle add_file(const nfs3::FileHandle& dir, const std::string& name, std::uint32_t mode = 0644,
                            std::uint32_t uid = 0, std::uint32_t gid = 0, std::string data = {});
  nfs3::FileHandle add_symlink(const nfs3::FileHandle& dir, const std::string& name, const std::string& target,
                               std::uint32_t mode = 0777, std::uint32_t uid = 0, std::uint32_t gid = 0);
  /// Unlinks `name` (an empty directory, or any other object).
  void unlink(const nfs3::FileHandle& dir, const std::string& name);
  void move(const nfs3::FileHandle& from_dir, const std::string& from, const nfs3::FileHandle& to_dir,
            const std::string& to);
  void chmod(const nfs3::FileHandle& fh, std::uint32_t mode);
  /// Appends a byte to a file's data (size, mtime and ctime change).
  void append(const nfs3::FileHandle& fh);
  void set_link_target(const nfs3::FileHandle& fh, const std::string& target);
  void set_free_bytes(std::uint64_t bytes);
  void set_name_max(std::uint32_t n);

  nfs3::Fattr attributes(const nfs3::FileHandle& fh) const;
  /// Names in `dir` (without "." and ".."), sorted.
  std::vector<std::string> names(const nfs3::FileHandle& dir) const;

  // ---- calls ------------------------------------------------------------------------
  std::size_t calls(nfs3::Proc p) const;
  std::size_t total_calls() const;
  /// Calls of GETATTR, LOOKUP, ACCESS, SETATTR and READDIRPLUS that came with the
  /// caller's "gone" flag (CallContext::caller_gone): work that would be abandoned
  /// if that caller left.
  std::size_t abandonable_calls() const { return abandonable_.load(); }
  void reset_calls();
  /// The next `times` calls of `p` fail with `status`, marked gateway_status.
  void fail(nfs3::Proc p, std::size_t times, nfs3::Status status = nfs3::Status::Jukebox);
  /// The same, after `after` calls of `p` that are answered; `made_up` false makes
  /// the failures the origin's own (not marked gateway_status).
  void fail_later(nfs3::Proc p, std::size_t after, std::size_t times, nfs3::Status status, bool made_up);
  /// Calls of `p` from now on wait (answered already) until release(p).
  void hold(nfs3::Proc p) { gates_.hold(p); }
  void note(const CallContext& ctx) {
    if (ctx.caller_gone) ++abandonable_;
  }
  /// Calls of `p` waiting now.
  std::size_t held(nfs3::Proc p) const { return gates_.held(p); }
  /// Lets every waiting call of `p` go and stops holding new ones.
  void release(nfs3::Proc p) { gates_.release(p); }

  Awaitable<void> null(const CallContext& ctx) override;
  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) override;
  Awaitable<nfs3::SetattrRes> setattr(const CallContext& ctx, nfs3::SetattrArgs args) override;
  Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) override;
  Awaitable<nfs3::AccessRes> access(const CallContext& ctx, nfs3::AccessArgs args) override;
  Awaitable<nfs3::ReadlinkRes> readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) override;
  Awaitable<nfs3::ReadRes> read(const CallContext& ctx, nfs3::ReadArgs args) override;
  Awaitable<nfs3::WriteRes> write(const CallContext& ctx, nfs3::WriteArgs args) override;
  Awaitable<nfs3::CreateRes> create(const CallContext& ctx, nfs3::CreateArgs args) override;
  Awaitable<nfs3::MkdirRes> mkdir(const CallContext& ctx, nfs3::MkdirArgs args) override;
  Awaitable<nfs3::SymlinkRes> symlink(const CallContext& ctx, nfs3::SymlinkArgs args) override;
  Awaitable<nfs3::MknodRes> mknod(const CallContext& ctx, nfs3::MknodArgs args) override;
  Awaitable<nfs3::RemoveRes> remove(const CallContext& ctx, nfs3::RemoveArgs args) override;
  Awaitable<nfs3::RmdirRes> rmdir(const CallContext& ctx, nfs3::RmdirArgs args) override;
  Awaitable<nfs3::RenameRes> rename(const CallContext& ctx, nfs3::RenameArgs args) override;
  Awaitable<nfs3::LinkRes> link(const CallContext& ctx, nfs3::LinkArgs args) override;
  Awaitable<nfs3::ReaddirRes> readdir(const CallContext& ctx, nfs3::ReaddirArgs args) override;
  Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) override;
  Awaitable<nfs3::FsstatRes> fsstat(const CallContext& ctx, nfs3::FsstatArgs args) override;
  Awaitable<nfs3::FsinfoRes> fsinfo(const CallContext& ctx, nfs3::FsinfoArgs args) override;
  Awaitable<nfs3::PathconfRes> pathconf(const CallContext& ctx, nfs3::PathconfArgs args) override;
  Awaitable<nfs3::CommitRes> commit(const CallContext& ctx, nfs3::CommitArgs args) override;

 private:
  std::atomic<std::size_t> abandonable_{0};
  static constexpr std::uint64_t kRootId = 1;

  struct Node {
    nfs3::Fattr attr;
    std::map<std::string, std::uint64_t> entries;  // directories
    std::uint64_t parent = kRootId;                // directories
    std::string data;                              // files: contents; links: target
  };
  struct Failure {
    std::size_t after = 0;
    std::size_t times = 0;
    nfs3::Status status = nfs3::Status::Jukebox;
    bool made_up = true;
  };

  /// Counts the call, then fails it, or answers it with `compute()` and delays the reply while held.
  template <typename Res, typename Compute>
  Awaitable<Res> serve(nfs3::Proc p, Compute compute);

  // With mu_ held.
  Node* find(const nfs3::FileHandle& fh);
  const Node* find(const nfs3::FileHandle& fh) const;
  nfs3::Time tick();
  std::uint64_t make_node(Node& dir, const std::string& name, nfs3::FileType type, std::uint32_t mode,
                          std::uint32_t uid, std::uint32_t gid, const nfs3::Time& t);
  void touch_dir(Node& dir, const nfs3::Time& t);
  void drop_link(Node& dir, const std::string& name, const nfs3::Time& t);
  void do_move(Node& from, const std::string& from_name, Node& to, const std::string& to_name);
  static bool may(const Credentials& c, const nfs3::Fattr& a, std::uint32_t rwx);
  static nfs3::WccAttr wcc(const nfs3::Fattr& a) { return {a.size, a.mtime, a.ctime}; }
  /// The entries of a directory in listing order ("." and ".." first); cookie i+1 resumes after entry i.
  std::vector<std::pair<std::string, std::uint64_t>> listing(const Node& dir) const;
  template <typename Res, typename Fill>
  Res make_child(const Credentials& c, const nfs3::DirOpArgs& where, nfs3::FileType type, std::uint32_t mode,
                 Fill fill);

  nfs3::GetattrRes do_getattr(const nfs3::GetattrArgs& a);
  nfs3::SetattrRes do_setattr(const Credentials& c, const nfs3::SetattrArgs& a);
  nfs3::LookupRes do_lookup(const Credentials& c, const nfs3::LookupArgs& a);
  nfs3::AccessRes do_access(const Credentials& c, const nfs3::AccessArgs& a);
  nfs3::ReadlinkRes do_readlink(const Credentials& c, const nfs3::ReadlinkArgs& a);
  nfs3::ReadRes do_read(const Credentials& c, const nfs3::ReadArgs& a);
  nfs3::WriteRes do_write(const Credentials& c, const nfs3::WriteArgs& a);
  nfs3::RemoveRes do_remove(const Credentials& c, const nfs3::RemoveArgs& a, bool dir);
  nfs3::RenameRes do_rename(const Credentials& c, const nfs3::RenameArgs& a);
  nfs3::LinkRes do_link(const Credentials& c, const nfs3::LinkArgs& a);
  nfs3::ReaddirplusRes do_readdirplus(const Credentials& c, const nfs3::ReaddirplusArgs& a, bool plus);
  nfs3::FsstatRes fsstat_of(const nfs3::FileHandle& fh);
  nfs3::FsinfoRes fsinfo_of(const nfs3::FileHandle& fh);
  nfs3::PathconfRes pathconf_of(const nfs3::FileHandle& fh);

  mutable std::mutex mu_;
  std::map<std::uint64_t, Node> nodes_;
  std::uint64_t next_fileid_ = kRootId + 1;
  std::uint32_t clock_ = 0;
  std::uint64_t free_bytes_ = 1ull << 30;
  std::uint32_t name_max_ = 255;
  std::array<std::size_t, nfs3::kProcCount> calls_{};
  nfsgw::test::CallGates gates_;
  std::array<Failure, nfs3::kProcCount> failures_{};
};

}  // namespace nfsgw::metacache::test
