// plan_reload: what a reload applies live, what waits for a restart (and is kept as
// it runs), and which exports come and go.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "config/reload_plan.h"

namespace nfsgw::config {
namespace {

const char* kBase = R"(
[server]
listen = "127.0.0.1"
nfs_port = 2049
threads = 4
[cache]
dir = "/var/cache/nfsgw"
memory_mb = 256
[[export]]
path = "/data"
origin = "nfs://filer/data"
access = "rw"
squash = "root"
dir_ttl = "30s"
[[export]]
path = "/tools"
origin = "nfs://filer/tools"
access = "ro"
)";

Config base() { return parse_config(kBase, "base.toml"); }

/// kBase with `from` replaced by `to` (which must occur).
Config edited(const std::string& from, const std::string& to) {
  std::string text = kBase;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return parse_config(text, "next.toml");
}

bool has(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(ReloadPlanTest, SameFileChangesNothing) {
  const ReloadPlan plan = plan_reload(base(), base());
  EXPECT_TRUE(plan.unchanged());
  EXPECT_EQ(plan.lines(), std::vector<std::string>{"no changes"});
}

TEST(ReloadPlanTest, LiveChangesAreListedAndTakenFromTheNewFile) {
  const ReloadPlan plan = plan_reload(
      base(), edited("access = \"rw\"\nsquash = \"root\"\ndir_ttl = \"30s\"",
                     "access = \"ro\"\nsquash = \"all\"\ndir_ttl = \"1s\"\nclients = [\"10.0.0.0/8\"]\n"
                     "consistency = \"strict\"\nanon_uid = 7"));
  EXPECT_TRUE(plan.needs_restart.empty());
  EXPECT_TRUE(plan.added.empty());
  EXPECT_TRUE(plan.removed.empty());
  EXPECT_TRUE(has(plan.applied, "export /data: dir_ttl: \"30s\" -> \"1s\"")) << plan.applied.size();
  EXPECT_TRUE(has(plan.applied, "export /data: access: \"rw\" -> \"ro\""));
  EXPECT_TRUE(has(plan.applied, "export /data: squash: \"root\" -> \"all\""));
  EXPECT_TRUE(has(plan.applied, "export /data: clients: [\"0.0.0.0/0\", \"::/0\"] -> [\"10.0.0.0/8\"]"));
  EXPECT_TRUE(has(plan.applied, "export /data: consistency: \"ttl\" -> \"strict\""));
  EXPECT_TRUE(has(plan.applied, "export /data: anon_uid: 65534 -> 7"));
  EXPECT_EQ(plan.applied.size(), 6u);
  const ExportConfig& e = plan.effective.exports[0];
  EXPECT_EQ(e.coherency.dir_ttl, std::chrono::seconds(1));
  EXPECT_EQ(e.access, Access::ReadOnly);
  EXPECT_EQ(e.squash, Squash::All);
  EXPECT_EQ(e.anon_uid, 7u);
  EXPECT_FALSE(e.allows("127.0.0.1"));
  EXPECT_TRUE(has(plan.lines(), "applied: export /data: dir_ttl"));
}

TEST(ReloadPlanTest, ServerAndCacheKeysNeedARestartAndKeepTheirRunningValues) {
  Config next = edited("threads = 4", "threads = 8");
  next.cache.memory_mb = 512;
  next.server.nfs_port = 3049;
  const ReloadPlan plan = plan_reload(base(), next);
  EXPECT_TRUE(plan.applied.empty());
  EXPECT_TRUE(has(plan.needs_restart, "[server] threads: 4 -> 8 (needs a restart; 4 until then)"));
  EXPECT_TRUE(has(plan.needs_restart, "[server] nfs_port: 2049 -> 3049"));
  EXPECT_TRUE(has(plan.needs_restart, "[cache] memory_mb: 256 -> 512"));
  EXPECT_EQ(plan.needs_restart.size(), 3u);
  EXPECT_EQ(plan.effective.server.threads, 4u);
  EXPECT_EQ(plan.effective.server.nfs_port, 2049);
  EXPECT_EQ(plan.effective.cache.memory_mb, 256u);
  EXPECT_TRUE(has(plan.lines(), "needs a restart: [server] threads"));
}

TEST(ReloadPlanTest, AnExportsOriginNeedsARestartWhileItsWindowsApply) {
  const ReloadPlan plan = plan_reload(
      base(), edited("origin = \"nfs://filer/data\"\naccess = \"rw\"\nsquash = \"root\"\ndir_ttl = \"30s\"",
                     "origin = \"nfs://other/data\"\naccess = \"rw\"\nsquash = \"root\"\ndir_ttl = \"2s\"\n"
                     "upstream_connections = 8\nmetadata_cache = false"));
  EXPECT_TRUE(has(plan.needs_restart, "export /data: origin: \"nfs://filer/data\" -> \"nfs://other/data\""));
  EXPECT_TRUE(has(plan.needs_restart, "export /data: upstream_connections: 4 -> 8"));
  EXPECT_TRUE(has(plan.needs_restart, "export /data: metadata_cache: true -> false"));
  EXPECT_EQ(plan.needs_restart.size(), 3u);
  EXPECT_TRUE(has(plan.applied, "export /data: dir_ttl: \"30s\" -> \"2s\""));
  const ExportConfig& e = plan.effective.exports[0];
  EXPECT_EQ(e.origin.text, "nfs://filer/data");
  EXPECT_EQ(e.origin.host, "filer");
  EXPECT_EQ(e.upstream_connections, 4u);
  EXPECT_TRUE(e.coherency.enabled);
  EXPECT_EQ(e.coherency.dir_ttl, std::chrono::seconds(2));
  EXPECT_EQ(e.id, base().exports[0].id);
}

TEST(ReloadPlanTest, WritesSwitchBothWaysLive) {
  const std::string back = "squash = \"root\"\nwrites = \"back\"\nwrite_back_delay = \"5s\"";
  const Config writing_back = edited("squash = \"root\"", back);
  // From "back" to "through" applies at once: the gateway flushes first.
  const ReloadPlan to_through = plan_reload(writing_back, base());
  EXPECT_TRUE(to_through.needs_restart.empty());
  EXPECT_TRUE(has(to_through.applied, "export /data: writes: \"back\" -> \"through\""));
  EXPECT_TRUE(has(to_through.applied, "export /data: write_back_delay: \"5s\" -> \"30s\""));
  EXPECT_EQ(to_through.effective.exports[0].writes, Writes::Through);
  const ReloadPlan to_back = plan_reload(base(), writing_back);
  EXPECT_TRUE(to_back.needs_restart.empty());
  EXPECT_TRUE(has(to_back.applied, "export /data: writes: \"through\" -> \"back\""));
  EXPECT_EQ(to_back.effective.exports[0].writes, Writes::Back);
  EXPECT_EQ(to_back.effective.exports[0].write_back_delay, std::chrono::seconds(5));
}

TEST(ReloadPlanTest, WritesBackWaitsForTheMetadataCacheItNeeds) {
  // Running without a metadata cache; the new file turns it on (a restart) and
  // writes back: both wait, or the export would write back without its cache.
  const Config running = edited("squash = \"root\"", "squash = \"root\"\nmetadata_cache = false");
  const ReloadPlan plan = plan_reload(running, edited("squash = \"root\"", "squash = \"root\"\nwrites = \"back\""));
  EXPECT_TRUE(plan.applied.empty());
  EXPECT_TRUE(has(plan.needs_restart, "export /data: metadata_cache: false -> true"));
  EXPECT_TRUE(has(plan.needs_restart, "export /data: writes: \"through\" -> \"back\" (needs a restart"));
  EXPECT_EQ(plan.needs_restart.size(), 2u);
  EXPECT_EQ(plan.effective.exports[0].writes, Writes::Through);
  EXPECT_FALSE(plan.effective.exports[0].coherency.enabled);
}

TEST(ReloadPlanTest, ExportsAddedAndRemovedByPathKeepTheirIds) {
  const ReloadPlan plan =
      plan_reload(base(), edited("path = \"/tools\"\norigin = \"nfs://filer/tools\"",
                                 "path = \"/scratch\"\norigin = \"nfs://filer/scratch\""));
  EXPECT_EQ(plan.added, std::vector<std::string>{"/scratch"});
  EXPECT_EQ(plan.removed, std::vector<std::string>{"/tools"});
  EXPECT_TRUE(plan.needs_restart.empty());
  ASSERT_EQ(plan.effective.exports.size(), 2u);
  EXPECT_EQ(plan.effective.exports[1].path, "/scratch");
  // Ids come from the path, as at start-up: the same path has the same id in any file.
  EXPECT_EQ(plan.effective.exports[1].id, parse_config(R"(
[[export]]
path = "/scratch"
origin = "nfs://x/y"
)").exports[0].id);
  EXPECT_EQ(plan.effective.exports[0].id, base().exports[0].id);
  EXPECT_TRUE(has(plan.lines(), "applied: added export /scratch"));
  EXPECT_TRUE(has(plan.lines(), "applied: removed export /tools (its handles answer STALE)"));
}

TEST(ReloadPlanTest, ReorderedExportsAreNoChange) {
  Config next = base();
  std::swap(next.exports[0], next.exports[1]);
  EXPECT_TRUE(plan_reload(base(), next).unchanged());
}

}  // namespace
}  // namespace nfsgw::config
