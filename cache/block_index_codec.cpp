#include "cache/block_index_codec.h"

#include "cache/byte_codec.h"
#include "cache/metadata_codec.h"

namespace nfsgw::cache::codec {
namespace {
constexpr std::uint8_t kVersion = 1;
}

std::string file_key(const ObjectKey& file) { return object_prefix(file); }
void append_file_key(std::string& out, const ObjectKey& file) { append_object_prefix(out, file); }

std::string block_key(std::string_view file_key, std::uint64_t index) {
  std::string k(file_key);
  Out(k).u64(index);
  return k;
}

std::uint64_t block_index_of(std::string_view block_key) {
  if (block_key.size() < 8) return 0;
  return In(block_key.substr(block_key.size() - 8)).u64();
}

std::string lru_key(Millis last_used, std::string_view file_key) {
  std::string k;
  Out o(k);
  o.i64(last_used);
  o.bytes(file_key);
  return k;
}

bool split_lru_key(std::string_view key, Millis& last_used, std::string& file_key) {
  if (key.size() < 8 + 5) return false;  // time, export id, handle length
  last_used = In(key.substr(0, 8)).i64();
  file_key.assign(key.substr(8));
  return true;
}

std::string encode(const FileRecord& r) {
  std::string s;
  Out o(s);
  o.u8(kVersion);
  o.stamp(r.stamp);
  o.u64(r.id);
  o.i64(r.last_used);
  o.u64(r.blocks);
  o.u64(r.bytes);
  return s;
}

std::string encode(const BlockRecord& r) {
  std::string s;
  Out o(s);
  o.u8(kVersion);
  o.u64(r.file_id);
  o.u32(r.length);
  o.u32(r.crc);
  return s;
}

std::optional<FileRecord> decode_file(std::string_view v) {
  In in(v);
  if (in.u8() != kVersion) return std::nullopt;
  FileRecord r;
  r.stamp = in.stamp();
  r.id = in.u64();
  r.last_used = in.i64();
  r.blocks = in.u64();
  r.bytes = in.u64();
  if (!in.done()) return std::nullopt;
  return r;
}

std::optional<BlockRecord> decode_block(std::string_view v) {
  In in(v);
  if (in.u8() != kVersion) return std::nullopt;
  BlockRecord r;
  r.file_id = in.u64();
  r.length = in.u32();
  r.crc = in.u32();
  if (!in.done()) return std::nullopt;
  return r;
}

}  // namespace nfsgw::cache::codec
