#include "gateway/rpc/answer_memo.h"

#include <cstring>

#include "cache/key_hash.h"

namespace nfsgw::rpc {
namespace {

void put_u32(std::string& s, std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }

}  // namespace

AnswerMemo::AnswerMemo() : id_(cache::new_table_owner()) {}

cache::MemoShape AnswerMemo::shape() { return {Table::table_bytes(1), Table::kSets}; }
void AnswerMemo::set_sets(std::size_t sets) { Table::set_sets(sets); }
void AnswerMemo::make_for_this_thread() { Table::make_for_this_thread(); }

void AnswerMemo::make_key(std::string& key, std::uint32_t prog, std::uint32_t vers, std::uint32_t proc,
                          const CallContext& ctx, std::span<const std::uint8_t> args) {
  // Fields of fixed size first, lengths before the variable ones: two different
  // calls never make the same key. The machine name goes into no answer.
  key.clear();
  put_u32(key, prog);
  put_u32(key, vers);
  put_u32(key, proc);
  put_u32(key, ctx.cred.uid);
  put_u32(key, ctx.cred.gid);
  put_u32(key, static_cast<std::uint32_t>(ctx.cred.gids.size()) | (ctx.cred.auth_none ? 0x100u : 0u));
  for (std::uint32_t g : ctx.cred.gids) put_u32(key, g);
  put_u32(key, static_cast<std::uint32_t>(ctx.client_address.size()));
  key.append(ctx.client_address);
  key.append(reinterpret_cast<const char*>(args.data()), args.size());
}

std::size_t AnswerMemo::call_hash(std::uint32_t prog, std::uint32_t vers, std::uint32_t proc,
                                  std::span<const std::uint8_t> args) {
  const std::uint64_t seed = cache::kKeyHashSeed ^ (std::uint64_t{prog} << 32 | std::uint64_t{vers} << 8 | proc);
  return cache::key_hash(std::string_view(reinterpret_cast<const char*>(args.data()), args.size()), seed);
}

void AnswerMemo::prefetch(std::size_t hash) const {
  if (const Table::Set* set = Table::set_if_made(hash)) Table::prefetch(*set, hash);
}

AnswerMemo::Found AnswerMemo::answer(std::size_t hash, std::string_view key, std::vector<std::uint8_t>& out) const {
  Table::Set* set = Table::set_if_made(hash);
  if (set == nullptr) return Found::No;  // nothing kept on this thread yet
  if (Slot* found = Table::find(*set, id_, hash, holding(key))) {
    Slot& s = *found;
    if (s.epoch != epoch() || !s.deps.still_holds()) return Found::No;
    if (++s.uses >= kUsesBeforeRefresh) return Found::Refresh;
    s.deps.replay_bumps();
    const auto* result = reinterpret_cast<const std::uint8_t*>(s.bytes.data() + s.key_bytes);
    out.insert(out.end(), result, result + s.result_bytes);
    return Found::Yes;
  }
  return Found::No;
}

void AnswerMemo::keep(std::size_t hash, std::string_view key, std::uint64_t epoch,
                      std::span<const std::uint8_t> result, std::span<const std::uint8_t> data,
                      const cache::AnswerBasis& deps) const {
  const std::size_t padded = data.size() + (4 - data.size() % 4) % 4;  // XDR: to 4 bytes
  if (!deps.keepable() || key.size() + result.size() + padded > kInlineBytes) return;
  Slot& slot = Table::place(Table::set_of(hash), id_, hash, holding(key));
  slot.epoch = epoch;
  slot.uses = 0;
  slot.key_bytes = static_cast<std::uint16_t>(key.size());
  slot.result_bytes = static_cast<std::uint16_t>(result.size() + padded);
  char* at = slot.bytes.data();
  std::memcpy(at, key.data(), key.size());
  at += key.size();
  if (!result.empty()) std::memcpy(at, result.data(), result.size());
  at += result.size();
  if (!data.empty()) std::memcpy(at, data.data(), data.size());
  std::memset(at + data.size(), 0, padded - data.size());
  slot.deps = deps;
}

}  // namespace nfsgw::rpc
