// Every NFSv3 procedure with its name and flags, decided here once: the dispatch
// table (gateway/rpc/nfs3_procedures.cpp) gives the flags to each call's
// CallContext, and the forwarder (gateway/upstream/forwarder.cpp) takes from it
// the name it logs and whether a call lost with its connection may be sent again.
// Header-only, without Asio or the server: the upstream library includes it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "gateway/rpc/procedure_flags.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::rpc {

struct Nfs3ProcedureInfo {
  nfs3::Proc proc;
  const char* name;
  std::uint32_t flags;  // flags::Mutates, flags::Idempotent
};

/// Indexed by procedure number. Idempotent means that executing the call twice
/// leaves the same state and answer as executing it once, so a call whose fate is
/// unknown (its connection died) may be re-sent. Not idempotent: CREATE, MKDIR,
/// SYMLINK, MKNOD, REMOVE, RMDIR, RENAME and LINK, whose second execution would
/// answer EXIST or NOENT for the first one's success. WRITE writes the same bytes
/// at the same offset, COMMIT flushes again, an unguarded SETATTR sets the same
/// absolute values: those are idempotent (but see nfs3_call_idempotent below).
inline constexpr std::array<Nfs3ProcedureInfo, nfs3::kProcCount> kNfs3Procedures{{
    {nfs3::Proc::Null, "NULL", flags::Idempotent},
    {nfs3::Proc::Getattr, "GETATTR", flags::Idempotent},
    {nfs3::Proc::Setattr, "SETATTR", flags::Mutates | flags::Idempotent},
    {nfs3::Proc::Lookup, "LOOKUP", flags::Idempotent},
    {nfs3::Proc::Access, "ACCESS", flags::Idempotent},
    {nfs3::Proc::Readlink, "READLINK", flags::Idempotent},
    {nfs3::Proc::Read, "READ", flags::Idempotent},
    {nfs3::Proc::Write, "WRITE", flags::Mutates | flags::Idempotent},
    {nfs3::Proc::Create, "CREATE", flags::Mutates},
    {nfs3::Proc::Mkdir, "MKDIR", flags::Mutates},
    {nfs3::Proc::Symlink, "SYMLINK", flags::Mutates},
    {nfs3::Proc::Mknod, "MKNOD", flags::Mutates},
    {nfs3::Proc::Remove, "REMOVE", flags::Mutates},
    {nfs3::Proc::Rmdir, "RMDIR", flags::Mutates},
    {nfs3::Proc::Rename, "RENAME", flags::Mutates},
    {nfs3::Proc::Link, "LINK", flags::Mutates},
    {nfs3::Proc::Readdir, "READDIR", flags::Idempotent},
    {nfs3::Proc::Readdirplus, "READDIRPLUS", flags::Idempotent},
    {nfs3::Proc::Fsstat, "FSSTAT", flags::Idempotent},
    {nfs3::Proc::Fsinfo, "FSINFO", flags::Idempotent},
    {nfs3::Proc::Pathconf, "PATHCONF", flags::Idempotent},
    {nfs3::Proc::Commit, "COMMIT", flags::Mutates | flags::Idempotent},
}};

namespace detail {
constexpr bool nfs3_table_in_order() {
  for (std::size_t i = 0; i < kNfs3Procedures.size(); ++i) {
    if (static_cast<std::size_t>(kNfs3Procedures[i].proc) != i) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::nfs3_table_in_order(), "kNfs3Procedures must be indexed by procedure number");

constexpr const Nfs3ProcedureInfo& nfs3_procedure(nfs3::Proc proc) {
  return kNfs3Procedures[static_cast<std::size_t>(proc)];
}

/// The table's Idempotent flag of `proc`.
constexpr bool nfs3_idempotent(nfs3::Proc proc) {
  return (nfs3_procedure(proc).flags & flags::Idempotent) != 0;
}

/// Whether one call of `proc` with these arguments may be sent again: the table's
/// flag, for every procedure but one (below).
template <typename Args>
constexpr bool nfs3_call_idempotent(nfs3::Proc proc, const Args&) {
  return nfs3_idempotent(proc);
}

/// The one per-call exception: a guarded SETATTR (sattrguard3 present) is not
/// idempotent. Its guard compares the object's ctime, which the first execution
/// changes, so a second execution answers NOT_SYNC for the first one's success.
/// The dispatch table cannot see the guard (it flags procedures, before the
/// arguments are decoded), so CallContext::proc_flags still carries Idempotent
/// for every SETATTR; code deciding whether to repeat a call asks this function.
constexpr bool nfs3_call_idempotent(nfs3::Proc proc, const nfs3::SetattrArgs& args) {
  return nfs3_idempotent(proc) && !args.guard.has_value();
}

}  // namespace nfsgw::rpc
