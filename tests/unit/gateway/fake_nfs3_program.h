// A recording fake of the downstream Nfs3Program: it remembers every call (the
// procedure, the CallContext it was given, the last arguments per procedure) and
// answers with canned results that a test sets beforehand. Tests use it to see
// exactly what a layer above sent "upstream", and that refused calls never got here.
#pragma once

#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gateway/nfs3_program.h"

namespace nfsgw::test {

class FakeNfs3Program : public Nfs3Program {
 public:
  struct Call {
    std::string proc;
    CallContext ctx;
  };

  /// Every call, in arrival order.
  std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  std::size_t call_count() const {
    std::lock_guard lock(mu_);
    return calls_.size();
  }
  /// The context of the last call (fails the test through an exception if none).
  CallContext last_ctx() const {
    std::lock_guard lock(mu_);
    if (calls_.empty()) throw std::logic_error("FakeNfs3Program: no call recorded");
    return calls_.back().ctx;
  }

  /// When set to a procedure name ("getattr"), that procedure throws instead.
  std::string throw_in;

  Awaitable<void> null(const CallContext& ctx) override {
    record("null", ctx);
    co_return;
  }

#define NFSGW_FAKE_PROC(name, Args, Res)                                              \
  nfs3::Args name##_args{};                                                          \
  nfs3::Res name##_res{};                                                            \
  Awaitable<nfs3::Res> name(const CallContext& ctx, nfs3::Args args) override { \
    record(#name, ctx);                                                              \
    {                                                                                \
      std::lock_guard lock(mu_);                                                     \
      name##_args = args;                                                            \
    }                                                                                \
    if (throw_in == #name) throw std::runtime_error("fake " #name " failed");        \
    co_return name##_res;                                                            \
  }

  NFSGW_FAKE_PROC(getattr, GetattrArgs, GetattrRes)
  NFSGW_FAKE_PROC(setattr, SetattrArgs, SetattrRes)
  NFSGW_FAKE_PROC(access, AccessArgs, AccessRes)
  NFSGW_FAKE_PROC(readlink, ReadlinkArgs, ReadlinkRes)
  NFSGW_FAKE_PROC(read, ReadArgs, ReadRes)
  NFSGW_FAKE_PROC(write, WriteArgs, WriteRes)
  NFSGW_FAKE_PROC(create, CreateArgs, CreateRes)
  NFSGW_FAKE_PROC(mkdir, MkdirArgs, MkdirRes)
  NFSGW_FAKE_PROC(symlink, SymlinkArgs, SymlinkRes)
  NFSGW_FAKE_PROC(mknod, MknodArgs, MknodRes)
  NFSGW_FAKE_PROC(remove, RemoveArgs, RemoveRes)
  NFSGW_FAKE_PROC(rmdir, RmdirArgs, RmdirRes)
  NFSGW_FAKE_PROC(rename, RenameArgs, RenameRes)
  NFSGW_FAKE_PROC(link, LinkArgs, LinkRes)
  NFSGW_FAKE_PROC(readdir, ReaddirArgs, ReaddirRes)
  NFSGW_FAKE_PROC(readdirplus, ReaddirplusArgs, ReaddirplusRes)
  NFSGW_FAKE_PROC(fsstat, FsstatArgs, FsstatRes)
  NFSGW_FAKE_PROC(fsinfo, FsinfoArgs, FsinfoRes)
  NFSGW_FAKE_PROC(pathconf, PathconfArgs, PathconfRes)
  NFSGW_FAKE_PROC(commit, CommitArgs, CommitRes)

  /// When set, lookup_now answers with it at once (nfs3_program.h); recorded as
  /// "lookup_now".
  std::optional<nfs3::LookupRes> lookup_now_res;
  /// When true, lookup_now throws.
  bool lookup_now_throws = false;
  Now<nfs3::LookupRes> lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) override {
    if (lookup_now_throws) throw std::runtime_error("fake lookup_now failed");
    if (!lookup_now_res) return {};
    record("lookup_now", ctx);
    {
      std::lock_guard lock(mu_);
      lookup_args = args;
    }
    return {lookup_now_res, {}};
  }
#undef NFSGW_FAKE_PROC

  /// LOOKUP answers from this function when set (MOUNT walks need one answer per
  /// name), else with lookup_res.
  std::function<nfs3::LookupRes(const nfs3::LookupArgs&)> on_lookup;
  nfs3::LookupArgs lookup_args{};
  std::vector<nfs3::LookupArgs> lookup_history;
  nfs3::LookupRes lookup_res{};
  Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) override {
    record("lookup", ctx);
    {
      std::lock_guard lock(mu_);
      lookup_args = args;
      lookup_history.push_back(args);
    }
    if (throw_in == "lookup") throw std::runtime_error("fake lookup failed");
    co_return on_lookup ? on_lookup(args) : lookup_res;
  }

 protected:
  void record(const char* proc, const CallContext& ctx) {
    std::lock_guard lock(mu_);
    calls_.push_back({proc, ctx});
  }

 private:
  mutable std::mutex mu_;
  std::vector<Call> calls_;
};

}  // namespace nfsgw::test
