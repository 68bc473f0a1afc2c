// The NFSv3 dispatch table over an Nfs3Program.
#pragma once

#include "gateway/nfs3_program.h"
#include "gateway/rpc/procedure_table.h"

namespace nfsgw::rpc {

/// Builds the table for program 100003 version 3; `program` must outlive it.
ProgramVersion make_nfs3_table(Nfs3Program& program);

}  // namespace nfsgw::rpc
