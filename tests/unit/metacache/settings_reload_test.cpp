// MetadataCache::set_settings (a configuration reload): the new windows apply to
// the answers learnt from then on; what was cached keeps the expiry it was given.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

using SettingsReloadTest = MetaCacheTest;

TEST_F(SettingsReloadTest, AShorterWindowAppliesAtOnceToWhatIsCached) {
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644, 0, 0, "abc");
  ASSERT_EQ(getattr(f).status, Status::Ok);
  clock.advance(5'000);
  getattr(f);
  ASSERT_EQ(origin.calls(Proc::Getattr), 1u);  // inside the 10 s window

  cache::CoherencySettings shorter = settings;
  shorter.attr_ttl = std::chrono::seconds(1);
  layer->set_settings(&shorter);
  EXPECT_EQ(layer->settings().attr_ttl, std::chrono::seconds(1));
  // 5 s were left of the old window, more than the new one: revalidated now.
  getattr(f);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
  clock.advance(500);
  getattr(f);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);  // renewed for 1 s
  clock.advance(600);
  getattr(f);
  EXPECT_EQ(origin.calls(Proc::Getattr), 3u);
}

TEST_F(SettingsReloadTest, ALongerWindowAppliesFromTheNextRevalidation) {
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644, 0, 0, "abc");
  getattr(f);
  cache::CoherencySettings longer = settings;
  longer.attr_ttl = std::chrono::minutes(10);
  layer->set_settings(&longer);
  clock.advance(10'000);  // the old window of the cached entry is over
  getattr(f);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
  clock.advance(60'000);  // renewed for 10 min
  getattr(f);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
}

TEST_F(SettingsReloadTest, ImmutableToTtlRevalidatesWhatWasCachedForever) {
  settings.consistency = cache::Consistency::Immutable;
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644, 0, 0, "abc");
  getattr(f);
  clock.advance(3'600'000);
  getattr(f);
  ASSERT_EQ(origin.calls(Proc::Getattr), 1u);
  cache::CoherencySettings ttl = settings;
  ttl.consistency = cache::Consistency::Ttl;
  layer->set_settings(&ttl);
  getattr(f);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
}

TEST_F(SettingsReloadTest, StrictFromTheNextCall) {
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644, 0, 0, "abc");
  getattr(f);
  getattr(f);
  ASSERT_EQ(origin.calls(Proc::Getattr), 1u);
  cache::CoherencySettings strict = settings;
  strict.consistency = cache::Consistency::Strict;
  layer->set_settings(&strict);
  getattr(f);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);  // strict: GETATTR always asks
}

}  // namespace
}  // namespace nfsgw::metacache::test
