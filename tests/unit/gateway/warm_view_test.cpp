// What `nfsgw warm` shows (progress bar, log lines, remaining time, summary) and
// the progress lines it reads from the admin socket.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "gateway/admin/admin_protocol.h"
#include "gateway/cli/progress_view.h"
#include "gateway/admin/warm_wire.h"

namespace nfsgw::warm {
namespace {

TEST(WarmView, CountsAndClocks) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1000), "1,000");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_clock(0), "0:00");
  EXPECT_EQ(format_clock(7.9), "0:07");
  EXPECT_EQ(format_clock(754), "12:34");
  EXPECT_EQ(format_clock(3723), "1:02:03");
  EXPECT_EQ(format_clock(-1), "0:00");
}

TEST(WarmView, NoEstimateWhileTheTreeIsStillBeingFound) {
  WarmFigures f;
  f.entries = 500;
  f.paths_total = 1;
  f.discovering = 3;
  EXPECT_FALSE(fraction_done(f, false));
  EXPECT_FALSE(remaining_seconds(f, false, 10));
  const std::string bar = progress_bar_line(f, false, 10, 100);
  EXPECT_EQ(bar, "500 entries  50 entries/s  0:10 elapsed");
}

TEST(WarmView, ManifestGivesTheTotal) {
  WarmFigures f;
  f.entries = 250;
  f.paths_total = 1000;
  f.paths_done = 250;
  f.discovering = 7;
  ASSERT_TRUE(fraction_done(f, false));
  EXPECT_DOUBLE_EQ(*fraction_done(f, false), 0.25);
  EXPECT_DOUBLE_EQ(*remaining_seconds(f, false, 10), 30);
  const std::string bar = progress_bar_line(f, false, 10, 80);
  EXPECT_EQ(bar.rfind("[", 0), 0u) << bar;
  EXPECT_NE(bar.find("]  25%  250 entries  25 entries/s  0:10 elapsed  ~0:30 left"), std::string::npos) << bar;
  EXPECT_LE(bar.size(), 80u);
}

TEST(WarmView, DataBytesGiveTheTotalOnceEverythingIsFound) {
  WarmFigures f;
  f.entries = 100;
  f.bytes = 3u << 20;
  f.data_total = 4u << 20;
  f.paths_total = 1;
  f.discovering = 0;
  EXPECT_DOUBLE_EQ(*fraction_done(f, true), 0.75);
  EXPECT_DOUBLE_EQ(*remaining_seconds(f, true, 3), 1);
  const std::string line = progress_log_line(f, true, 3);
  EXPECT_EQ(line,
            "warm: 100 entries (0 directories listed), 3.0 MiB of file data, 33 entries/s, 1.0 MiB/s, 0:03 elapsed, "
            "75% done, ~0:01 left, 0 failed");
}

TEST(WarmView, SummaryNamesTheOriginTraffic) {
  WarmOutcome o;
  o.figures.entries = 5051;
  o.figures.dirs = 51;
  o.figures.bytes = 10u << 20;
  o.origin_calls = 5102;
  o.blocks_fetched = 10;
  o.bytes_fetched = 10u << 20;
  o.ms = 2500;
  EXPECT_EQ(summary_text("/export/a", o, true),
            "warmed /export/a: 5,051 entries (51 directories listed), 10.0 MiB of file data in 2.5 s "
            "(2,020 entries/s, 4.0 MiB/s)\n"
            "origin: 5,102 metadata calls, 10 data blocks fetched (10.0 MiB) (the export's, during the warm)\n");
  o.figures.failed = 2;
  o.cancelled = true;
  const std::string s = summary_text("/export/a", o, false);
  EXPECT_EQ(s.rfind("cancelled warming /export/a: 5,051 entries", 0), 0u) << s;
  EXPECT_NE(s.find("\n2 paths failed\n"), std::string::npos) << s;
}

TEST(WarmWire, ProgressFailureAndSummaryLinesRoundTrip) {
  WarmFigures f{1, 2, 3, 4, 5, 6, 7, 8};
  const std::string p = format_progress(f);
  ASSERT_EQ(p.back(), '\n');
  EXPECT_EQ(parse_progress(std::string_view(p).substr(0, p.size() - 1)), f);

  const WarmFailure w{"/export/a b/\n%x", "NOENT at LOOKUP 'x'"};
  const std::string fl = format_failure(w);
  EXPECT_EQ(fl, "failed /export/a%20b/%0A%25x NOENT at LOOKUP 'x'\n");
  const auto back = parse_failure(std::string_view(fl).substr(0, fl.size() - 1));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->path, w.path);
  EXPECT_EQ(back->why, w.why);

  WarmOutcome o;
  o.figures = f;
  o.origin_calls = 9;
  o.blocks_fetched = 10;
  o.bytes_fetched = 11;
  o.ms = 12;
  o.cancelled = true;
  const std::string s = format_summary(o);
  const auto so = parse_summary(std::string_view(s).substr(0, s.size() - 1));
  ASSERT_TRUE(so);
  EXPECT_EQ(so->figures, f);
  EXPECT_EQ(so->origin_calls, 9u);
  EXPECT_EQ(so->blocks_fetched, 10u);
  EXPECT_EQ(so->bytes_fetched, 11u);
  EXPECT_EQ(so->ms, 12u);
  EXPECT_TRUE(so->cancelled);
}

TEST(WarmWire, UnknownFieldsAreIgnoredAndBadOnesRefused) {
  const auto f = parse_progress("progress entries=7 future_field=3");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->entries, 7u);
  EXPECT_FALSE(parse_progress("progress entries=x"));
  EXPECT_FALSE(parse_progress("progress entries=-1"));
  EXPECT_FALSE(parse_progress("progress entries"));
  EXPECT_FALSE(parse_progress("progressive entries=1"));
  EXPECT_FALSE(parse_progress("summary entries=1"));
  EXPECT_FALSE(parse_failure("failed"));
  EXPECT_FALSE(parse_failure("failed /a%zz NOENT"));
  EXPECT_FALSE(parse_failure("failed /a"));
}

TEST(WarmProtocol, WarmAndExportsRequestsRoundTrip) {
  admin::WarmRequest w;
  w.export_path = "/ex port";
  w.subpath = "/a";
  w.depth = 2;
  w.data = true;
  w.parallel = 32;
  w.manifest = {"/a/b c", "", "/x"};
  const std::string wire = admin::format_request(w);
  EXPECT_EQ(wire, "v1 warm /ex%20port /a 2 1 32 3\n/a/b%20c\n/\n/x\n");
  const auto r = admin::parse_request(std::string_view(wire).substr(0, wire.find('\n')));
  const auto* back = std::get_if<admin::WarmRequest>(&r);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->export_path, "/ex port");
  EXPECT_EQ(back->subpath, "/a");
  EXPECT_EQ(back->depth, 2u);
  EXPECT_TRUE(back->data);
  EXPECT_EQ(back->parallel, 32u);
  EXPECT_EQ(back->manifest_count, 3u);
  EXPECT_EQ(admin::parse_manifest_line("/a/b%20c\r"), "/a/b c");
  EXPECT_EQ(admin::parse_manifest_line("/"), "");

  const auto all = admin::parse_request("v1 warm /e / all 0 16 0");
  EXPECT_FALSE(std::get<admin::WarmRequest>(all).depth);
  EXPECT_EQ(admin::format_request(admin::ExportsRequest{}), "v1 exports\n");
  EXPECT_TRUE(std::holds_alternative<admin::ExportsRequest>(admin::parse_request("v1 exports")));
}

std::string request_error(const std::string& line) {
  try {
    admin::parse_request(line);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(WarmProtocol, BadWarmRequestsAreRefusedWithTheReason) {
  EXPECT_EQ(request_error("v1 warm /e /"),
            "usage: warm <export-path> <subpath> <depth|all> <data 0|1> <parallel> <manifest-count>");
  EXPECT_EQ(request_error("v1 warm e / all 0 16 0"), "the export path must start with '/': 'e'");
  EXPECT_EQ(request_error("v1 warm /e /.. all 0 16 0"), "'.' and '..' are not allowed in a path: '/..'");
  EXPECT_EQ(request_error("v1 warm /e / x 0 16 0"), "depth must be a number, not 'x'");
  EXPECT_EQ(request_error("v1 warm /e / all 2 16 0"), "data must be 0 or 1, not '2'");
  EXPECT_EQ(request_error("v1 warm /e / all 0 0 0"), "parallel must be at least 1");
  EXPECT_EQ(request_error("v1 warm /e / all 0 257 0"), "parallel must be at most 256, not '257'");
  EXPECT_EQ(request_error("v1 warm /e / all 0 16 1000001"), "manifest-count must be at most 1000000, not '1000001'");
  EXPECT_EQ(request_error("v1 exports now"), "usage: exports");
  EXPECT_EQ(request_error("v1 frob"), "unknown command 'frob': stats, invalidate, reload, exports, warm or flush");
  EXPECT_THROW(admin::parse_manifest_line(""), std::invalid_argument);
  EXPECT_THROW(admin::parse_manifest_line("relative"), std::invalid_argument);
  EXPECT_THROW(admin::parse_manifest_line("/a/%00"), std::invalid_argument);
}

// Every request the protocol can carry is named in the answer to an unknown one: a
// command added to the Request variant and left out of that list fails here.
template <std::size_t I = 0>
void expect_every_command_is_listed(const std::string& listed) {
  if constexpr (I < std::variant_size_v<admin::Request>) {
    admin::Request request{std::in_place_index<I>};
    const std::string line = admin::format_request(request);
    const std::string word = line.substr(3, line.find_first_of(" \n", 3) - 3);  // after "v1 "
    EXPECT_NE(listed.find(word), std::string::npos) << "'" << word << "' is not listed in: " << listed;
    expect_every_command_is_listed<I + 1>(listed);
  }
}

TEST(WarmProtocol, AnUnknownCommandIsAnsweredWithEveryCommandThereIs) {
  const std::string listed = request_error("v1 frob");
  ASSERT_EQ(listed.rfind("unknown command 'frob': ", 0), 0u) << listed;
  expect_every_command_is_listed(listed.substr(listed.find(": ") + 2));
}

}  // namespace
}  // namespace nfsgw::warm
