// Which exports share their cached metadata (ExportConfig::cache_space): those of
// one origin server, whatever path of it they name; never those of two servers.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

using namespace nfsgw::config;

namespace {

Config two_exports(const std::string& origin_a, const std::string& origin_b) {
  return parse_config("[[export]]\npath = \"/a\"\norigin = \"" + origin_a + "\"\n" +
                      "[[export]]\npath = \"/b\"\norigin = \"" + origin_b + "\"\n");
}

bool shared(const std::string& origin_a, const std::string& origin_b) {
  const Config c = two_exports(origin_a, origin_b);
  EXPECT_NE(c.exports[0].id, c.exports[1].id);  // two exports all the same
  return c.exports[0].cache_space == c.exports[1].cache_space;
}

}  // namespace

TEST(ConfigCacheSpace, OneOriginTreeThroughTwoExportsIsOneSpace) {
  EXPECT_TRUE(shared("nfs://filer/vol/data", "nfs://filer/vol/data"));
  EXPECT_TRUE(shared("nfs://filer/vol/data", "nfs://filer/vol/data/sub"));  // an overlapping subtree
  EXPECT_TRUE(shared("nfs://filer/vol/data", "nfs://FILER/vol/other"));    // host names ignore case
  EXPECT_TRUE(shared("nfs://127.0.0.1/x?nfsport=2049&mountport=20048", "nfs://127.0.0.1/y?nfsport=2049"));
}

TEST(ConfigCacheSpace, TwoServersAreTwoSpaces) {
  EXPECT_FALSE(shared("nfs://filer/vol/data", "nfs://filer2/vol/data"));
  EXPECT_FALSE(shared("nfs://127.0.0.1/x?nfsport=2049", "nfs://127.0.0.1/x?nfsport=2050"));
  EXPECT_FALSE(shared("nfs://127.0.0.1:2049/x", "nfs://127.0.0.1/x"));  // rpcbind's answer is not known here
}

TEST(ConfigCacheSpace, IsNotTheExportId) {
  // Handles embed the export id; the space must not depend on the export's path.
  const Config c = two_exports("nfs://filer/vol", "nfs://filer/vol");
  EXPECT_EQ(c.exports[0].cache_space, c.exports[1].cache_space);
  EXPECT_NE(c.exports[0].cache_space, 0u);
}
