// The MOUNT v1 and v3 dispatch tables over a MountProgram.
#pragma once

#include "gateway/mount_program.h"
#include "gateway/rpc/procedure_table.h"

namespace nfsgw::rpc {

/// MOUNT v3: NULL, MNT, DUMP, UMNT, UMNTALL, EXPORT.
ProgramVersion make_mount3_table(MountProgram& program);
/// MOUNT v1: the same, except MNT (v1 returns NFSv2 handles, which nfsgw does not
/// issue), answered with PROC_UNAVAIL.
ProgramVersion make_mount1_table(MountProgram& program);

}  // namespace nfsgw::rpc
