// An independent reference for the NLM v4 and NSM v1 wire layouts: libnfs's
// generated zdr_* routines (its NLM and NSM client). Only nlm_libnfs_reference.cpp
// includes libnfs headers; this header speaks nfsgw types only.
// libnfs declares the owner handle as a C string (nlm4_oh), so values given to it
// must have an owner handle of printable bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/nlm4_types.h"
#include "protocol/nlm_nsm_types.h"

namespace nfsgw::test::nlm_libnfs_ref {

using Bytes = std::vector<std::uint8_t>;

Bytes encode(const nlm4::TestArgs& v);
Bytes encode_granted(const nlm4::TestArgs& v);  // NLM4_GRANTEDargs: same layout
Bytes encode(const nlm4::LockArgs& v);
Bytes encode(const nlm4::CancelArgs& v);
Bytes encode(const nlm4::UnlockArgs& v);
Bytes encode(const nlm4::Res& v);
Bytes encode(const nlm4::TestRes& v);

Bytes encode(const nsm::SmName& v);
Bytes encode(const nsm::Mon& v);
Bytes encode(const nsm::MonId& v);
Bytes encode(const nsm::MyId& v);
Bytes encode(const nsm::StatRes& v);
Bytes encode(const nsm::SmStat& v);
Bytes encode(const nsm::StatChange& v);

}  // namespace nfsgw::test::nlm_libnfs_ref
