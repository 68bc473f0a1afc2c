// Counter JSON shape and reply attribution by xid.
#include "tools/wan-emu/traffic_counters.h"

#include <gtest/gtest.h>

#include "tools/wan-emu/xid_tracker.h"

namespace nfsgw::wanemu {
namespace {

TEST(TrafficCounters, JsonHasPerProcedureAndPerDirectionCounts) {
  TrafficCounters c;
  ProcKey lookup{100003, 3, 3};
  c.count_call(Direction::Up, lookup);
  c.count_call(Direction::Up, lookup);
  c.count_reply(Direction::Down, &lookup);
  c.count_reply(Direction::Down, nullptr);
  c.dir(Direction::Up).bytes = 300;
  std::string j = c.to_json(R"("x":1)");
  EXPECT_NE(j.find(R"("100003:3:3":{"calls":2,"replies":1})"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("up":{"bytes":300,"calls":2,"replies":0)"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("down":{"bytes":0,"calls":0,"replies":2,"unmatched_replies":1)"), std::string::npos) << j;
  EXPECT_EQ(j.rfind(R"({"x":1,)", 0), 0u) << j;
  c.reset();
  EXPECT_EQ(c.to_json().find("100003"), std::string::npos);
}

TEST(XidTracker, MatchesRepliesOnceAndStaysBounded) {
  XidTracker t(4);
  t.on_call(1, {100003, 3, 1});
  t.on_call(2, {100005, 3, 1});
  auto k = t.on_reply(2);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->prog, 100005u);
  EXPECT_FALSE(t.on_reply(2));  // a duplicate reply is not matched twice
  EXPECT_FALSE(t.on_reply(77));
  for (std::uint32_t x = 10; x < 100; ++x) t.on_call(x, {1, 1, 1});
  EXPECT_LE(t.outstanding(), 4u);
}

}  // namespace
}  // namespace nfsgw::wanemu
