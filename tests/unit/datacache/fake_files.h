// A small in-memory origin of regular files (and one directory) standing in
// below the data cache. It answers GETATTR, ACCESS, READ, WRITE, SETATTR (size,
// mode, times), FSINFO, COMMIT and LINK (a link count) as an NFSv3 server would, with WCC
// data, and REMOVE of a name of a file the test names; every change
// ticks a counter that becomes the file's mtime and ctime. The other procedures
// answer NFS3ERR_NOTSUPP. A test can:
//  - count the calls per procedure and the bytes READ gave;
//  - change a file directly, "behind the cache's back";
//  - set the rtmax FSINFO announces (READ answers at most that many bytes), and
//    make READ replies short;
//  - make the next calls of a procedure fail, with the origin's status or one the
//    gateway made up (gateway_status);
//  - refuse reading to one uid (ACCESS without Read, READ answering ACCES);
//  - make the next READ replies carry the attributes of a newer version than
//    GETATTR shows (the file "changed during the fetch");
//  - leave WCC data out of WRITE and SETATTR replies;
//  - refuse Modify in ACCESS to one uid (its WRITEs still succeed), answer every
//    WRITE UNSTABLE, and tell the calls in the order served;
//  - hold the calls of a procedure until released (answered already, the reply
//    delayed);
//  - answer GETATTR and ACCESS at once too (answer steps), as a cache below that
//    holds them would;
//  - restart: the write verifier changes and a file loses bytes it had not
//    committed, its attributes staying as the cache saw them.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gateway/nfs3_program.h"
#include "tests/unit/support/call_gates.h"

namespace nfsgw::datacache::test {

class FakeFiles final : public Nfs3Program {
 public:
  static constexpr nfs3::WriteVerf kVerf{1, 2, 3, 4, 5, 6, 7, 8};

  // ---- files, changed directly (no call is counted) -----------------------------
  nfs3::FileHandle add_file(std::string data, std::uint32_t mode = 0644);
  nfs3::FileHandle add_dir();
  /// Replaces a file's contents: size, mtime and ctime change.
  void set_data(const nfs3::FileHandle& fh, std::string data);
  std::string data(const nfs3::FileHandle& fh) const;
  /// Gives the file an owner (uid 0 otherwise).
  void set_owner(const nfs3::FileHandle& fh, std::uint32_t uid);
  nfs3::Fattr attributes(const nfs3::FileHandle& fh) const;

  // ---- behaviour ------------------------------------------------------------------
  void set_rtmax(std::uint32_t rtmax);
  /// READ replies give at most half of what was asked (at least one byte).
  void set_short_reads(bool on);
  void refuse_read(std::uint32_t uid);
  /// ACCESS answers `uid` without Modify and Extend; its WRITEs still succeed (as
  /// a server lets a file's owner write a file whose mode does not, say).
  void refuse_modify(std::uint32_t uid);
  /// WRITE answers committed = UNSTABLE whatever it was asked (a server that does
  /// less than RFC 1813 says).
  void answer_unstable(bool on);
  /// How the last WRITE asked its data to be committed.
  nfs3::StableHow last_write_stable() const;
  /// The calls served, in order (from the last reset_calls()).
  std::vector<nfs3::Proc> sequence() const;
  /// The next `times` calls of `p` fail with `status` (made up by the gateway when
  /// `gateway_status`).
  void fail(nfs3::Proc p, std::size_t times, nfs3::Status status, bool gateway_status);
  /// The next `times` READ replies carry a ctime one tick newer than the file's.
  void newer_read_attrs(std::size_t times);
  void omit_wcc(bool on);
  /// The origin restarted: WRITE and COMMIT answer another verifier from now on,
  /// and `fh`'s bytes are `data` again (its uncommitted writes lost) with its
  /// attributes unchanged (as a metadata cache inside its window would show them).
  void restart(const nfs3::FileHandle& fh, std::string data);
  nfs3::WriteVerf verifier() const;
  /// The next REMOVE answers OK and takes one link of `fh` (as if it removed one of
  /// its names); without it REMOVE answers NOTSUPP.
  void unlink_on_remove(const nfs3::FileHandle& fh);
  /// GETATTR and ACCESS answered at once too (nfs3_program.h), as the coroutines
  /// answer them. Each answer counts one in step_answers() through its basis, so
  /// an answer asked for tentatively and not used counts nothing.
  void answer_steps(bool on) { answer_steps_ = on; }
  std::uint64_t step_answers() const { return step_answers_.load(); }
  void hold(nfs3::Proc p) { gates_.hold(p); }
  std::size_t held(nfs3::Proc p) const { return gates_.held(p); }
  void release(nfs3::Proc p) { gates_.release(p); }

  std::size_t calls(nfs3::Proc p) const;
  std::uint64_t bytes_read() const;
  void reset_calls();

  Awaitable<void> null(const CallContext& ctx) override;
  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) override;
  Now<nfs3::GetattrRes> getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) override;
  Now<nfs3::AccessRes> access_now(const CallContext& ctx, const nfs3::AccessArgs& args) override;
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
  struct Node {
    nfs3::Fattr attr;
    std::string data;
  };
  struct Failure {
    std::size_t times = 0;
    nfs3::Status status = nfs3::Status::Io;
    bool gateway_status = false;
  };

  /// Counts the call, then fails it or answers it with `compute()` (under the lock);
  /// the reply waits while `p` is held.
  template <typename Res, typename Compute>
  Awaitable<Res> serve(nfs3::Proc p, Compute compute);
  /// A procedure the data cache only passes through: counted, NOTSUPP.
  template <typename Res>
  Awaitable<Res> unsupported(nfs3::Proc p);

  // With mu_ held.
  Node* find(const nfs3::FileHandle& fh);
  /// The node of `fh`, or null with `res.status` set to STALE.
  template <typename Res>
  Node* node_or_stale(const nfs3::FileHandle& fh, Res& res) {
    Node* n = find(fh);
    if (n == nullptr) res.status = nfs3::Status::Stale;
    return n;
  }
  const Node* find(const nfs3::FileHandle& fh) const;
  nfs3::FileHandle add(nfs3::FileType type, std::string data, std::uint32_t mode);
  nfs3::Time tick() { return {++clock_, 0}; }
  void changed(Node& n, std::size_t size);
  nfs3::WccData wcc(const nfs3::Fattr& before, const nfs3::Fattr& after) const;
  nfs3::ReadRes do_read(const Credentials& c, const nfs3::ReadArgs& a);
  nfs3::WriteRes do_write(const nfs3::WriteArgs& a);
  nfs3::SetattrRes do_setattr(const nfs3::SetattrArgs& a);
  nfs3::AccessRes do_access(const Credentials& c, const nfs3::AccessArgs& a);

  mutable std::mutex mu_;
  std::map<std::uint64_t, Node> nodes_;
  std::uint64_t next_fileid_ = 100;
  std::uint32_t clock_ = 1;
  std::uint32_t rtmax_ = 1u << 20;
  bool short_reads_ = false;
  bool omit_wcc_ = false;
  nfs3::WriteVerf verf_ = kVerf;
  std::size_t newer_read_attrs_ = 0;
  std::optional<nfs3::FileHandle> unlink_on_remove_;
  std::set<std::uint32_t> refused_;
  std::set<std::uint32_t> refused_modify_;
  bool answer_unstable_ = false;
  nfs3::StableHow last_write_stable_ = nfs3::StableHow::Unstable;
  std::vector<nfs3::Proc> sequence_;
  std::uint64_t bytes_read_ = 0;
  std::array<std::size_t, nfs3::kProcCount> calls_{};
  std::atomic<bool> answer_steps_{false};
  std::atomic<std::uint64_t> step_answers_{0};
  /// Moved by every change of a file: what its step answers rest on (they vouch
  /// for them, as a cache layer below would).
  std::atomic<std::uint64_t> changes_{0};
  std::array<Failure, nfs3::kProcCount> failures_{};
  nfsgw::test::CallGates gates_;
};

}  // namespace nfsgw::datacache::test
