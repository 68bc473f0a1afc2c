// The admin socket's line protocol: encoding of paths, request parsing and its
// errors, and splitting `nfsgw invalidate EXPORT[/PATH]` against the exports.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/export_target.h"

namespace nfsgw::admin {
namespace {

TEST(AdminProtocol, PercentEncodingRoundTripsAnyPathBytes) {
  std::string raw = "/a b/c\nd/100%/t\tab/\xc3\xa9/\x7f/";
  raw += '\x01';
  const std::string enc = percent_encode(raw);
  EXPECT_EQ(enc.find_first_of(" \n\t\x7f\x01"), std::string::npos) << enc;
  EXPECT_EQ(enc, "/a%20b/c%0Ad/100%25/t%09ab/%C3%A9/%7F/%01");
  EXPECT_EQ(percent_decode(enc), raw);
  EXPECT_EQ(percent_decode("%2f%2F"), "//");  // either case, and any byte may be escaped
}

TEST(AdminProtocol, MalformedEscapesAndNulAreRefused) {
  EXPECT_THROW(percent_decode("/a%2"), std::invalid_argument);
  EXPECT_THROW(percent_decode("/a%zz"), std::invalid_argument);
  EXPECT_THROW(percent_decode("%"), std::invalid_argument);
  EXPECT_THROW(percent_decode("/a%00b"), std::invalid_argument);
}

TEST(AdminProtocol, SubpathsAreNormalised) {
  EXPECT_EQ(normalize_subpath(""), "");
  EXPECT_EQ(normalize_subpath("/"), "");
  EXPECT_EQ(normalize_subpath("//"), "");
  EXPECT_EQ(normalize_subpath("/a//b/"), "/a/b");
  EXPECT_EQ(normalize_subpath("/a.b/..c"), "/a.b/..c");
  EXPECT_THROW(normalize_subpath("a/b"), std::invalid_argument);
  EXPECT_THROW(normalize_subpath("/a/../b"), std::invalid_argument);
  EXPECT_THROW(normalize_subpath("/a/."), std::invalid_argument);
}

TEST(AdminProtocol, ParsesStats) {
  EXPECT_EQ(parse_request("v1 stats"), Request(StatsRequest{false}));
  EXPECT_EQ(parse_request("v1 stats\r"), Request(StatsRequest{false}));
  EXPECT_EQ(parse_request("v1 stats text"), Request(StatsRequest{false}));
  EXPECT_EQ(parse_request("v1 stats json"), Request(StatsRequest{true}));
  EXPECT_THROW(parse_request("v1 stats xml"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 stats  json"), std::invalid_argument);
}

TEST(AdminProtocol, ParsesInvalidate) {
  EXPECT_EQ(parse_request("v1 invalidate /ex%20port /a%20b//c/ 1"),
            Request(InvalidateRequest{"/ex port", "/a b/c", true}));
  EXPECT_EQ(parse_request("v1 invalidate /export / 0"), Request(InvalidateRequest{"/export", "", false}));
  EXPECT_THROW(parse_request("v1 invalidate /export / 2"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 invalidate /export /"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 invalidate export / 0"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 invalidate /export a 0"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 invalidate /export /a/../b 0"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 invalidate /export /a b 0"), std::invalid_argument);  // raw space
}

TEST(AdminProtocol, ParsesReload) {
  EXPECT_EQ(parse_request("v1 reload /etc/nfsgw.toml"), Request(ReloadRequest{"/etc/nfsgw.toml"}));
  EXPECT_EQ(parse_request("v1 reload /a%20b.toml"), Request(ReloadRequest{"/a b.toml"}));
  EXPECT_THROW(parse_request("v1 reload"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 reload relative.toml"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 reload /a /b"), std::invalid_argument);
}

TEST(AdminProtocol, RefusesOtherVersionsAndGarbageWithAClearMessage) {
  try {
    parse_request("v2 stats");
    FAIL() << "v2 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported protocol version 'v2'"), std::string::npos) << e.what();
  }
  try {
    parse_request("stats");
    FAIL() << "request without version accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("expected 'v1 <command>"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_request(""), std::invalid_argument);
  EXPECT_THROW(parse_request("v1"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 reboot"), std::invalid_argument);
  EXPECT_THROW(parse_request(std::string("\x00\xff\x01", 3)), std::invalid_argument);
}

TEST(AdminProtocol, FormatThenParseIsTheIdentity) {
  const Request requests[] = {
      StatsRequest{false},
      StatsRequest{true},
      InvalidateRequest{"/export", "", false},
      InvalidateRequest{"/my export", "/with space/new\nline/100%", true},
      ReloadRequest{"/etc/nfsgw/nfsgw.toml"},
      ReloadRequest{"/etc/my conf/100%.toml"},
  };
  for (const auto& r : requests) {
    const std::string line = format_request(r);
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
    EXPECT_EQ(parse_request(std::string_view(line).substr(0, line.size() - 1)), r) << line;
  }
}

TEST(AdminProtocol, StatusLinesStayOneLine) {
  EXPECT_EQ(ok_line(), "ok\n");
  EXPECT_EQ(error_line("no such path /a\nb"), "error no such path /a\\x0Ab\n");
  EXPECT_EQ(error_line(""), "error unknown error\n");
  EXPECT_EQ(admin_socket_path("/var/lib/nfsgw"), "/var/lib/nfsgw/admin.sock");
  EXPECT_EQ(admin_socket_path("/var/lib/nfsgw/"), "/var/lib/nfsgw/admin.sock");
}

TEST(ExportTarget, LongestWholeComponentExportWins) {
  const std::vector<std::string> exports{"/data", "/data/projects", "/dat"};
  EXPECT_EQ(split_export_target("/data", exports), (ExportTarget{"/data", ""}));
  EXPECT_EQ(split_export_target("/data/", exports), (ExportTarget{"/data", ""}));
  EXPECT_EQ(split_export_target("/data/a/b", exports), (ExportTarget{"/data", "/a/b"}));
  EXPECT_EQ(split_export_target("/data/projects/x", exports), (ExportTarget{"/data/projects", "/x"}));
  EXPECT_EQ(split_export_target("/data/projectsX", exports), (ExportTarget{"/data", "/projectsX"}));
  EXPECT_EQ(split_export_target("/dat//a", exports), (ExportTarget{"/dat", "/a"}));
}

TEST(ExportTarget, RootExportCatchesTheRest) {
  const std::vector<std::string> exports{"/", "/data"};
  EXPECT_EQ(split_export_target("/", exports), (ExportTarget{"/", ""}));
  EXPECT_EQ(split_export_target("/other/x", exports), (ExportTarget{"/", "/other/x"}));
  EXPECT_EQ(split_export_target("/data/x", exports), (ExportTarget{"/data", "/x"}));
}

TEST(ExportTarget, UnknownExportNamesTheKnownOnes) {
  const std::vector<std::string> exports{"/data", "/home"};
  try {
    split_export_target("/srv/x", exports);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/data, /home"), std::string::npos) << e.what();
  }
  EXPECT_THROW(split_export_target("data/x", exports), std::invalid_argument);
  EXPECT_THROW(split_export_target("/data/../etc", exports), std::invalid_argument);
}

}  // namespace
}  // namespace nfsgw::admin
