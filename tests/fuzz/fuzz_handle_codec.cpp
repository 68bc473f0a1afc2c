// Gateway file handles (cache/handle_codec.*): what a client sends back as a
// file handle is verified and unwrapped before anything reaches the origin.
// Properties:
//  - unwrap() accepts only what wrap()/root() issue: whatever it accepts, sealing
//    the decoded value again gives the very same bytes (raw bytes from a client
//    cannot be forged into a handle);
//  - wrap() then unwrap() gives back the export and the origin handle;
//  - any flip, truncation or extension of an issued handle is refused;
//  - a digest handle whose store record is corrupt is refused, or gives back the
//    very origin handle it was issued for, never another.
//
// Input: byte 0 picks the mode (0 raw, 1 wrap and tamper, 2 corrupt store);
// the rest is that mode's material (see each function).
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cache/handle_codec.h"
#include "cache/kv_store.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using nfsgw::cache::HandleCodec;
using nfsgw::cache::KvStore;
using nfsgw::nfs3::FileHandle;
using nfsgw::nfs3::kFhSize;

std::vector<std::uint8_t> secret() { return std::vector<std::uint8_t>(32, 0x5c); }

/// The export root's origin handle every wrap here is given (Delta handles are
/// written against it).
const FileHandle& root_handle() {
  static const FileHandle root = [] {
    std::vector<std::uint8_t> r(60, 0x11);
    for (std::size_t i = 0; i < r.size(); i += 3) r[i] = static_cast<std::uint8_t>(i);
    return FileHandle(std::span<const std::uint8_t>(r));
  }();
  return root;
}

/// The origin handle a decoded non-root handle stands for.
FileHandle origin_of(const HandleCodec::Decoded& d) {
  if (d.kind != HandleCodec::Kind::Delta) return d.origin;
  auto o = HandleCodec::resolve_delta(d.delta, root_handle());
  FUZZ_CHECK(o.has_value());  // every Delta handle here was written against it
  return *o;
}

/// Reads from the input front to back; zeros once it runs out.
struct Bytes {
  std::span<const std::uint8_t> in;
  std::uint8_t u8() {
    if (in.empty()) return 0;
    std::uint8_t b = in[0];
    in = in.subspan(1);
    return b;
  }
  std::uint32_t u32() { return (std::uint32_t{u8()} << 24) | (std::uint32_t{u8()} << 16) | (std::uint32_t{u8()} << 8) | u8(); }
  std::span<const std::uint8_t> take(std::size_t n) {
    n = std::min(n, in.size());
    auto s = in.first(n);
    in = in.subspan(n);
    return s;
  }
};

/// The handle wrap()/root() would issue for what unwrap() decoded.
FileHandle reseal(HandleCodec& codec, const HandleCodec::Decoded& d) {
  if (d.kind == HandleCodec::Kind::Root) return codec.root(d.export_id);
  // Legacy mapped handles are never issued, and the store here has none.
  FUZZ_CHECK(d.kind != HandleCodec::Kind::Mapped);
  return codec.wrap(d.export_id, origin_of(d), &root_handle());
}

void check_accepted(HandleCodec& codec, const FileHandle& h) {
  auto d = codec.unwrap(h);
  if (!d) return;
  FUZZ_CHECK(d->kind != HandleCodec::Kind::Root || d->origin.empty());
  FUZZ_CHECK(reseal(codec, *d) == h);
}

/// Mode 0: the bytes as a client would send them (at most 64: the wire decoder
/// refuses longer ones). Issues a root and one handle of each kind first, so that
/// the input can be a mutation of a real handle.
void raw(HandleCodec& codec, Bytes b) {
  std::vector<std::uint8_t> origin(50, 0x11);
  (void)codec.root(1);
  (void)codec.wrap(1, FileHandle(std::span<const std::uint8_t>(origin.data(), 20)), &root_handle());
  (void)codec.wrap(1, FileHandle(std::span<const std::uint8_t>(origin.data(), 50)), &root_handle());  // delta
  origin.assign(50, 0x99);
  (void)codec.wrap(1, FileHandle(std::span<const std::uint8_t>(origin.data(), 50)), &root_handle());  // digest
  check_accepted(codec, FileHandle(b.take(kFhSize)));
}

/// Mode 1: export id (4 bytes), origin handle length (1 byte, mod 65) and bytes,
/// then tampering steps of 3 bytes each: op, position/length, value.
void wrap_and_tamper(HandleCodec& codec, Bytes b) {
  const std::uint32_t export_id = b.u32();
  const std::size_t len = b.u8() % (kFhSize + 1);
  std::vector<std::uint8_t> bytes(len, 0);
  auto given = b.take(len);
  std::copy(given.begin(), given.end(), bytes.begin());
  const FileHandle origin{std::span<const std::uint8_t>(bytes)};
  const FileHandle issued = codec.wrap(export_id, origin, &root_handle());
  FUZZ_CHECK(issued.len > 0 && issued.len <= kFhSize);
  auto d = codec.unwrap(issued);
  FUZZ_CHECK(d.has_value());
  FUZZ_CHECK(d->export_id == export_id);
  FUZZ_CHECK(d->kind != HandleCodec::Kind::Root && d->kind != HandleCodec::Kind::Mapped);
  FUZZ_CHECK(origin_of(*d) == origin);
  FUZZ_CHECK(codec.wrap(export_id, origin, &root_handle()) == issued);  // stable

  const FileHandle root = codec.root(export_id);
  auto r = codec.unwrap(root);
  FUZZ_CHECK(r && r->kind == HandleCodec::Kind::Root && r->export_id == export_id && r->origin.empty());

  for (int step = 0; step < 16 && !b.in.empty(); ++step) {
    const std::uint8_t op = b.u8(), where = b.u8(), value = b.u8();
    const FileHandle& base = (op & 0x80) ? root : issued;
    std::vector<std::uint8_t> t(base.view().begin(), base.view().end());
    switch (op % 4) {
      case 0:  // flip bits of one byte
        t[where % t.size()] ^= (value ? value : 1);
        break;
      case 1:  // truncate
        t.resize(where % t.size());
        break;
      case 2:  // extend
        if (t.size() < kFhSize) t.push_back(value);
        break;
      case 3:  // another export's id in an otherwise intact handle
        t[1 + where % 4] ^= (value ? value : 1);
        break;
    }
    const FileHandle tampered{std::span<const std::uint8_t>(t)};
    if (tampered == base) continue;  // extend at 64 bytes changes nothing
    FUZZ_CHECK(!codec.unwrap(tampered).has_value());
  }
}

/// Mode 2: export id (4 bytes), then the value (rest of the input) stored over the
/// record of a digest handle.
void corrupt_store(HandleCodec& codec, KvStore& store, Bytes b) {
  const std::uint32_t export_id = b.u32();
  std::vector<std::uint8_t> long_origin(60, 0x22);
  const FileHandle origin{std::span<const std::uint8_t>(long_origin)};
  const FileHandle digest = codec.wrap(export_id, origin);  // no root: the digest form
  FUZZ_CHECK(digest.len > 5 && digest.bytes[5] == static_cast<std::uint8_t>(HandleCodec::Kind::Digest));
  std::string key;
  store.scan(KvStore::kDefault, "fh/d2o/", "fh/d2o0", [&](std::string_view k, std::string_view) {
    key = std::string(k);
    return false;
  });
  FUZZ_CHECK(!key.empty());
  const auto rest = b.take(b.in.size());
  const std::string value(rest.begin(), rest.end());
  // Corrupted before the first unwrap: the codec's per-thread memo of verified
  // handles (cache/handle_memo.h) has not seen this handle, so unwrap reads the record.
  store.put(key, value);
  if (auto e = codec.unwrap(digest)) {
    FUZZ_CHECK(e->export_id == export_id);
    FUZZ_CHECK(e->origin == origin);  // only the record it was issued for passes
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // A fresh store per input: mapped handles do not pile up over millions of runs.
  auto store = nfsgw::cache::make_memory_store();
  HandleCodec codec(secret(), *store);
  Bytes b{std::span<const std::uint8_t>(data + 1, size - 1)};
  switch (data[0] % 3) {
    case 0: raw(codec, b); break;
    case 1: wrap_and_tamper(codec, b); break;
    case 2: corrupt_store(codec, *store, b); break;
  }
  return 0;
}
