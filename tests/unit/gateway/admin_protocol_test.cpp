// The admin socket's line protocol: encoding of paths, request parsing and its
// errors, and splitting `nfsgw invalidate EXPORT[/PATH]` against the exports.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/export_target.h"
#include "gateway/admin/flush_wire.h"
#include "gateway/cli/flush_cli.h"

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

TEST(AdminProtocol, ParsesFlush) {
  EXPECT_EQ(parse_request("v1 flush /ex%20port /a//b/"), Request(FlushRequest{"/ex port", "/a/b"}));
  EXPECT_EQ(parse_request("v1 flush /export /"), Request(FlushRequest{"/export", ""}));
  EXPECT_EQ(parse_request("v1 flush * /"), Request(FlushRequest{"", ""}));
  EXPECT_EQ(format_request(FlushRequest{"", ""}), "v1 flush * /\n");
  EXPECT_EQ(format_request(FlushRequest{"/my export", "/a%b"}), "v1 flush /my%20export /a%25b\n");
  EXPECT_THROW(parse_request("v1 flush * /a"), std::invalid_argument);  // every export: no path inside
  EXPECT_THROW(parse_request("v1 flush export /"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 flush /export"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 flush /export / 1"), std::invalid_argument);
  EXPECT_THROW(parse_request("v1 flush /export /a/../b"), std::invalid_argument);
}

TEST(AdminProtocol, FlushLinesRoundTrip) {
  const FlushFigures f{3, 12u << 20, 40u << 20};
  const std::string progress = format_flush_progress(f);
  EXPECT_EQ(progress, "progress files_left=3 bytes_left=12582912 bytes_flushed=41943040\n");
  EXPECT_EQ(parse_flush_progress(std::string_view(progress).substr(0, progress.size() - 1)), f);
  const FlushSummary s{f, 5200};
  const std::string summary = format_flush_summary(s);
  EXPECT_EQ(parse_flush_summary(std::string_view(summary).substr(0, summary.size() - 1)), s);
  EXPECT_EQ(format_flush_message("done\nnow"), "flushed done\\x0Anow\n");
  EXPECT_EQ(parse_flush_message("flushed 2 files committed"), "2 files committed");
  EXPECT_FALSE(parse_flush_progress("progress files_left=x"));
  EXPECT_FALSE(parse_flush_summary("progress files_left=1"));
  EXPECT_FALSE(parse_flush_message("flushedx"));
  // What `nfsgw flush` shows of them.
  EXPECT_EQ(flush_progress_line(f, 5.0), "flush: 3 files, 12.0 MiB left; 40.0 MiB flushed (8.0 MiB/s), 0:05 elapsed");
  EXPECT_EQ(flush_progress_line({1, 512, 0}, 0.0), "flush: 1 file, 512 B left; 0 B flushed, 0:00 elapsed");
  EXPECT_EQ(flush_done_line("/export/a", s, "3 files committed"),
            "flushed /export/a: 40.0 MiB in 5.2 s; 3 files committed\n");
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
      FlushRequest{"", ""},
      FlushRequest{"/export", ""},
      FlushRequest{"/my export", "/with space/new\nline/100%"},
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
