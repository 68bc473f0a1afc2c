#include "gateway/translator/export_policy.h"

#include "gateway/rpc/procedure_table.h"

namespace nfsgw {

Credentials squash(const Credentials& cred, const config::ExportConfig& e) {
  Credentials out = cred;
  const bool anonymous =
      cred.auth_none || e.squash == config::Squash::All;
  if (anonymous) {
    out.uid = e.anon_uid;
    out.gid = e.anon_gid;
    out.gids.clear();
    return out;
  }
  if (e.squash == config::Squash::Root) {
    if (out.uid == 0) out.uid = e.anon_uid;
    if (out.gid == 0) out.gid = e.anon_gid;
    for (auto& g : out.gids)
      if (g == 0) g = e.anon_gid;
  }
  return out;
}

nfs3::Status admit(const CallContext& ctx, const config::ExportConfig& e) {
  if (!e.allows(ctx.client_address)) return nfs3::Status::Acces;
  if ((ctx.proc_flags & rpc::flags::Mutates) && e.access == config::Access::ReadOnly)
    return nfs3::Status::RoFs;
  return nfs3::Status::Ok;
}

}  // namespace nfsgw
