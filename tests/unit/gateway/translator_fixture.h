// Two exports behind a HandleTranslator, each over its own recording fake, with a
// HandleCodec on an in-memory store and a fixed secret. Export "/rw" (read-write,
// squash root) and "/ro" (read-only, squash none), both for 127.0.0.0/8 only; each
// origin_root answers a fixed origin handle and counts how often it was asked.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "cache/handle_codec.h"
#include "config/config.h"
#include "gateway/translator/handle_translator.h"
#include "gateway/rpc/procedure_table.h"
#include "tests/unit/gateway/fake_nfs3_program.h"

namespace nfsgw::test {

inline nfs3::FileHandle handle_of(std::initializer_list<std::uint8_t> b) {
  return nfs3::FileHandle(std::span<const std::uint8_t>(b.begin(), b.size()));
}

/// The flags a mutating procedure (WRITE, CREATE, ...) carries in its CallContext.
constexpr std::uint32_t rpc_mutates() { return rpc::flags::Mutates; }

inline std::vector<std::uint8_t> fixed_secret() {
  std::vector<std::uint8_t> s(32);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint8_t>(0xA0 + i);
  return s;
}

inline config::ExportConfig make_export(const std::string& path, std::uint32_t id,
                                        config::Access access, config::Squash squash,
                                        std::vector<std::string> clients = {"127.0.0.0/8"}) {
  config::ExportConfig e;
  e.path = path;
  e.id = id;
  e.access = access;
  e.squash = squash;
  e.anon_uid = 65000;
  e.anon_gid = 65001;
  for (const auto& c : clients) e.clients.push_back(config::Cidr::parse(c));
  return e;
}

class TranslatorFixture : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kRwId = 0x1111;
  static constexpr std::uint32_t kRoId = 0x2222;
  /// The translator's READ/WRITE limit (what a 256 KiB record allows).
  static constexpr std::uint32_t kMaxTransfer = 256 * 1024 - 4096;

  TranslatorFixture()
      : store(cache::make_memory_store()),
        codec(fixed_secret(), *store),
        rw_export(make_export("/rw", kRwId, config::Access::ReadWrite, config::Squash::Root)),
        ro_export(make_export("/ro", kRoId, config::Access::ReadOnly, config::Squash::None)) {
    routes.push_back(ExportRoute{&rw_export, &rw_fake, [this]() -> Awaitable<nfs3::FileHandle> {
                                   ++rw_root_calls;
                                   co_return rw_origin_root;
                                 }});
    routes.push_back(ExportRoute{&ro_export, &ro_fake, [this]() -> Awaitable<nfs3::FileHandle> {
                                   ++ro_root_calls;
                                   co_return ro_origin_root;
                                 }});
    translator = std::make_unique<HandleTranslator>(codec, routes, kMaxTransfer);
  }

  /// A call from inside the allowed network, AUTH_SYS uid/gid 1000.
  static CallContext client_ctx(std::uint32_t proc_flags = 0) {
    CallContext c;
    c.xid = 77;
    c.client_address = "127.0.0.1";
    c.cred.uid = 1000;
    c.cred.gid = 1000;
    c.cred.gids = {1000, 0, 20};
    c.proc_flags = proc_flags;
    return c;
  }

  std::unique_ptr<cache::KvStore> store;
  cache::HandleCodec codec;
  config::ExportConfig rw_export, ro_export;
  FakeNfs3Program rw_fake, ro_fake;
  const nfs3::FileHandle rw_origin_root = handle_of({0x10, 0x11, 0x12, 0x13});
  const nfs3::FileHandle ro_origin_root = handle_of({0x20, 0x21, 0x22, 0x23, 0x24});
  int rw_root_calls = 0;
  int ro_root_calls = 0;
  std::vector<ExportRoute> routes;
  std::unique_ptr<HandleTranslator> translator;
};

}  // namespace nfsgw::test
