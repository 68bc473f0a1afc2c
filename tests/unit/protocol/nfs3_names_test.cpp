// Names used in logs and metrics.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "protocol/nfs3_types.h"

namespace nfsgw::nfs3 {
namespace {

TEST(Nfs3Names, Procedures) {
  EXPECT_STREQ(proc_name(0), "NULL");
  EXPECT_STREQ(proc_name(1), "GETATTR");
  EXPECT_STREQ(proc_name(17), "READDIRPLUS");
  EXPECT_STREQ(proc_name(21), "COMMIT");
  EXPECT_STREQ(proc_name(22), "UNKNOWN");
  EXPECT_STREQ(proc_name(0xFFFFFFFF), "UNKNOWN");
  std::set<std::string> names;
  for (std::uint32_t p = 0; p < kProcCount; ++p) names.insert(proc_name(p));
  EXPECT_EQ(names.size(), kProcCount);
}

TEST(Nfs3Names, Statuses) {
  EXPECT_STREQ(status_name(Status::Ok), "NFS3_OK");
  EXPECT_STREQ(status_name(Status::NoEnt), "NFS3ERR_NOENT");
  EXPECT_STREQ(status_name(Status::Stale), "NFS3ERR_STALE");
  EXPECT_STREQ(status_name(Status::Jukebox), "NFS3ERR_JUKEBOX");
  EXPECT_STREQ(status_name(static_cast<Status>(12345)), "NFS3ERR_UNKNOWN");
}

}  // namespace
}  // namespace nfsgw::nfs3
