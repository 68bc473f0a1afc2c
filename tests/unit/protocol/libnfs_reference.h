// A second independent reference for the NFSv3 wire layout: libnfs's generated
// zdr_* routines. Only libnfs_reference.cpp includes libnfs headers (they cannot
// share a translation unit with libtirpc's); this header speaks nfsgw types only.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/nfs3_types.h"

namespace nfsgw::test::libnfs_ref {

using Bytes = std::vector<std::uint8_t>;

Bytes encode(const nfs3::GetattrRes& v);
Bytes encode(const nfs3::SetattrArgs& v);
Bytes encode(const nfs3::LookupRes& v);
Bytes encode(const nfs3::ReadRes& v);
Bytes encode(const nfs3::WriteArgs& v);
Bytes encode(const nfs3::WriteRes& v);
Bytes encode(const nfs3::CreateArgs& v);
Bytes encode(const nfs3::CreateRes& v);
Bytes encode(const nfs3::SymlinkArgs& v);
Bytes encode(const nfs3::MknodArgs& v);
Bytes encode(const nfs3::ReaddirArgs& v);
Bytes encode(const nfs3::ReaddirplusRes& v);
Bytes encode(const nfs3::FsinfoRes& v);
Bytes encode(const nfs3::PathconfRes& v);
Bytes encode(const nfs3::CommitRes& v);

}  // namespace nfsgw::test::libnfs_ref
