// Two gateways (two translators, each with its own handle store) sharing the secret
// and the export: a handle one of them answered works on the other, which has never
// seen it, even as the other's first call (the export's origin root not yet known).
#include <gtest/gtest.h>

#include "tests/unit/gateway/run_awaitable.h"
#include "tests/unit/gateway/translator_fixture.h"

namespace nfsgw::test {
namespace {

using nfs3::Status;

constexpr std::uint32_t kId = 0x3333;

/// A 60-byte origin handle; `n` changes its last 10 bytes (a file of the root's
/// file system when n > 0).
nfs3::FileHandle long_handle(std::uint8_t n) {
  std::vector<std::uint8_t> b(60);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(0x40 + i);
  if (n > 0)
    for (std::size_t i = 50; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(n * 5 + i);
  return nfs3::FileHandle(b);
}

struct Gateway {
  std::unique_ptr<cache::KvStore> store = cache::make_memory_store();
  cache::HandleCodec codec{fixed_secret(), *store};
  config::ExportConfig exp = make_export("/long", kId, config::Access::ReadWrite, config::Squash::None);
  FakeNfs3Program fake;
  int root_calls = 0;
  std::vector<ExportRoute> routes;
  std::unique_ptr<HandleTranslator> translator;

  Gateway() {
    routes.push_back(ExportRoute{&exp, &fake, [this]() -> Awaitable<nfs3::FileHandle> {
                                   ++root_calls;
                                   co_return long_handle(0);
                                 }});
    translator = std::make_unique<HandleTranslator>(codec, routes, 64 * 1024);
  }
  static CallContext ctx() {
    CallContext c;
    c.client_address = "127.0.0.1";
    c.cred.uid = 1000;
    c.cred.gid = 1000;
    return c;
  }
  nfs3::LookupRes lookup(const nfs3::FileHandle& dir, const std::string& name) {
    nfs3::LookupArgs a;
    a.what.dir = dir;
    a.what.name = name;
    return run_awaitable(translator->lookup(ctx(), a));
  }
  nfs3::GetattrRes getattr(const nfs3::FileHandle& h) {
    nfs3::GetattrArgs a;
    a.object = h;
    return run_awaitable(translator->getattr(ctx(), a));
  }
};

TEST(TranslatorNodes, AHandleFromOneNodeWorksOnAnotherThatNeverSawIt) {
  Gateway a, b;
  a.fake.lookup_res.status = Status::Ok;
  a.fake.lookup_res.object = long_handle(7);
  const auto res = a.lookup(a.codec.root(kId), "file");
  ASSERT_EQ(res.status, Status::Ok);
  ASSERT_EQ(a.codec.unwrap(res.object)->kind, cache::HandleCodec::Kind::Delta);

  // Node b's first call of the export: its origin root is not known yet.
  EXPECT_EQ(b.root_calls, 0);
  EXPECT_EQ(b.getattr(res.object).status, Status::Ok);
  EXPECT_EQ(b.fake.getattr_args.object, long_handle(7));
  EXPECT_EQ(b.root_calls, 1);
  // And again, the root known now.
  b.fake.getattr_args.object = {};
  EXPECT_EQ(b.getattr(res.object).status, Status::Ok);
  EXPECT_EQ(b.fake.getattr_args.object, long_handle(7));

  // b answers the same handle for the same file.
  b.fake.lookup_res.status = Status::Ok;
  b.fake.lookup_res.object = long_handle(7);
  EXPECT_EQ(b.lookup(b.codec.root(kId), "file").object, res.object);
}

TEST(TranslatorNodes, ADeltaHandleOfAnotherRootIsStale) {
  Gateway a;
  // Issued against a root that differs in a byte the file shares with it.
  auto other_root = long_handle(0);
  other_root.bytes[2] ^= 0x11;
  auto file = long_handle(7);
  file.bytes[2] ^= 0x11;
  const auto h = a.codec.wrap(kId, file, &other_root);
  ASSERT_EQ(a.codec.unwrap(h)->kind, cache::HandleCodec::Kind::Delta);
  EXPECT_EQ(a.getattr(h).status, Status::Stale);
  EXPECT_EQ(a.fake.call_count(), 0u);
}

}  // namespace
}  // namespace nfsgw::test
