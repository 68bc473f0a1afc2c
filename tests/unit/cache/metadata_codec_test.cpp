// The metadata cache's encodings: keys share the prefixes invalidation relies on,
// every record round-trips, damaged values decode to nothing, cookies are fixed.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "cache/metadata_codec.h"
#include "handle_helpers.h"
#include "record_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::origin;
using nfsgw::cache::testing::sample_attr;

namespace {

template <typename K>
std::string key_of(const K& k) {
  std::string s;
  codec::append_key(s, k);
  return s;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

/// Encodes, decodes, and checks every way of damaging the value fails.
template <typename R>
R round_trip(const R& r, std::uint32_t used = 123456) {
  const std::string v = codec::encode_value(r, used);
  R out;
  std::uint32_t got_used = 0;
  EXPECT_TRUE(codec::decode_value(v, out, got_used));
  EXPECT_EQ(got_used, used);
  EXPECT_EQ(codec::value_used_time(v), used);
  for (std::size_t n = 0; n < v.size(); ++n) {
    R junk;
    std::uint32_t u;
    EXPECT_FALSE(codec::decode_value(std::string_view(v).substr(0, n), junk, u)) << "truncated to " << n;
  }
  R junk;
  std::uint32_t u;
  EXPECT_FALSE(codec::decode_value(v + "x", junk, u)) << "trailing byte";
  std::string bad_version = v;
  bad_version[0] = 9;
  EXPECT_FALSE(codec::decode_value(bad_version, junk, u));
  return out;
}

}  // namespace

TEST(MetadataKeys, ObjectKeysShareTheObjectAndExportPrefixes) {
  ObjectKey dir{0x01020304, origin(20, 1)};
  const std::string op = codec::object_prefix(dir), ep = codec::export_prefix(0x01020304);
  EXPECT_EQ(op.size(), 4u + 1 + 20);
  EXPECT_EQ(ep, std::string("\x01\x02\x03\x04", 4));  // big-endian
  EXPECT_TRUE(starts_with(op, ep));

  for (const std::string& k :
       {key_of(dir), key_of(NameKey{dir, "file.txt"}), key_of(CredKey{dir, 1000, 100, {5, 3}}),
        key_of(FsKey{dir, FsKind::Fsstat})}) {
    EXPECT_TRUE(starts_with(k, op));
    EXPECT_GE(k, op);
    EXPECT_LT(k, codec::prefix_end(op));
  }
  // Another object's keys are outside the object's range, inside the export's.
  ObjectKey other{0x01020304, origin(21, 1)};
  const auto ok = key_of(NameKey{other, "file.txt"});
  EXPECT_FALSE(starts_with(ok, op));
  EXPECT_FALSE(ok >= op && ok < codec::prefix_end(op));
  EXPECT_TRUE(ok >= ep && ok < codec::prefix_end(ep));
  // A name starting with 0xff stays inside its directory's range.
  const auto high = key_of(NameKey{dir, "\xff\xff name"});
  EXPECT_LT(high, codec::prefix_end(op));
  // Another export is outside.
  EXPECT_GE(key_of(ObjectKey{0x01020305, origin(20, 1)}), codec::prefix_end(ep));
}

TEST(MetadataKeys, PrefixEnd) {
  EXPECT_EQ(codec::prefix_end("ab"), "ac");
  EXPECT_EQ(codec::prefix_end(std::string("a\xff", 2)), "b");
  EXPECT_EQ(codec::prefix_end("\xff\xff"), "");
  EXPECT_EQ(codec::prefix_end(std::string("\x00\x00\x00\x00", 4)), std::string("\x00\x00\x00\x01", 4));
}

TEST(MetadataKeys, CredentialKeysIgnoreGroupOrderAndRepeats) {
  ObjectKey o{7, origin(16)};
  EXPECT_EQ(key_of(CredKey{o, 1, 2, {30, 10, 20}}), key_of(CredKey{o, 1, 2, {10, 20, 30}}));
  EXPECT_EQ(key_of(CredKey{o, 1, 2, {10, 10, 20}}), key_of(CredKey{o, 1, 2, {20, 10}}));
  EXPECT_NE(key_of(CredKey{o, 1, 2, {10}}), key_of(CredKey{o, 1, 2, {11}}));
  EXPECT_NE(key_of(CredKey{o, 1, 2, {}}), key_of(CredKey{o, 2, 1, {}}));
  EXPECT_NE(key_of(CredKey{o, 1, 2, {}}), key_of(CredKey{o, 1, 2, {2}}));
  AuthGroups many(kMaxAuthGroups);  // as many as AUTH_SYS carries
  for (std::uint32_t i = 0; i < kMaxAuthGroups; ++i) many[i] = 40 - i;
  auto sorted = many;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(key_of(CredKey{o, 1, 2, many}), key_of(CredKey{o, 1, 2, sorted}));
  CredKey k{o, 1, 2, {3, 1}};
  (void)key_of(k);
  EXPECT_EQ(k.gids, (AuthGroups{3, 1}));  // the caller's copy is untouched
}

TEST(MetadataKeys, DistinctKeysDoNotCollide) {
  std::set<std::string> keys;
  for (std::uint8_t len : {0, 1, 2, 63, 64})
    for (std::uint32_t ex : {0u, 1u, 0xffffffffu}) {
      ObjectKey o{ex, origin(len, 3)};
      keys.insert(key_of(NameKey{o, ""}));
      keys.insert(key_of(NameKey{o, "a"}));
    }
  EXPECT_EQ(keys.size(), 5u * 3 * 2);
  EXPECT_NE(key_of(FsKey{ObjectKey{1, origin(8)}, FsKind::Fsinfo}),
            key_of(FsKey{ObjectKey{1, origin(8)}, FsKind::Pathconf}));
}

TEST(MetadataValues, AttrRoundTrip) {
  AttrRecord r{sample_attr(3), 1'700'000'000'123, 42, 7};
  auto out = round_trip(r);
  EXPECT_EQ(out.attr, r.attr);
  EXPECT_EQ(out.expires, r.expires);
  EXPECT_EQ(out.seq, 42u);
  EXPECT_EQ(out.gen, 7u);
}

TEST(MetadataValues, LookupRoundTrip) {
  LookupRecord pos{true, origin(64, 9), 77, kNever};
  auto out = round_trip(pos);
  EXPECT_TRUE(out.exists);
  EXPECT_EQ(out.child, pos.child);
  EXPECT_EQ(out.dir_gen, 77u);
  EXPECT_EQ(out.expires, kNever);

  LookupRecord neg{false, {}, 5, 1'700'000'000'000};
  auto n = round_trip(neg);
  EXPECT_FALSE(n.exists);
  EXPECT_TRUE(n.child.empty());
  EXPECT_EQ(n.dir_gen, 5u);
  EXPECT_EQ(n.expires, neg.expires);
}

TEST(MetadataValues, ListingRoundTrip) {
  ListingRecord r;
  r.dir_gen = 99;
  r.entries.push_back({1, 10, ".", {}});
  r.entries.push_back({2, 11, "..", origin(8, 1)});
  r.entries.push_back({listing_cookie("a file"), 12, "a file", origin(32, 2)});
  r.entries.push_back({listing_cookie(std::string(300, 'n')), 13, std::string(300, 'n'), origin(64, 3)});
  auto out = round_trip(r);
  EXPECT_EQ(out.dir_gen, 99u);
  ASSERT_EQ(out.entries.size(), r.entries.size());
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    EXPECT_EQ(out.entries[i].cookie, r.entries[i].cookie);
    EXPECT_EQ(out.entries[i].fileid, r.entries[i].fileid);
    EXPECT_EQ(out.entries[i].name, r.entries[i].name);
    EXPECT_EQ(out.entries[i].child, r.entries[i].child);
  }
  ListingRecord empty;
  EXPECT_TRUE(round_trip(empty).entries.empty());
}

TEST(MetadataValues, LinkAccessFsRoundTrip) {
  LinkRecord l{Stamp::of(sample_attr(4)), "../target/with spaces"};
  auto lo = round_trip(l);
  EXPECT_EQ(lo.link, l.link);
  EXPECT_EQ(lo.target, l.target);

  AccessRecord a{Stamp::of(sample_attr(5)), 0x3f, 0x1b, 1'700'000'000'999};
  auto ao = round_trip(a);
  EXPECT_EQ(ao.object, a.object);
  EXPECT_EQ(ao.asked, 0x3fu);
  EXPECT_EQ(ao.granted, 0x1bu);
  EXPECT_EQ(ao.expires, a.expires);

  FsRecord f{std::string("\x00\x01xdr\xff", 6), 1234};
  auto fo = round_trip(f);
  EXPECT_EQ(fo.xdr, f.xdr);
  EXPECT_EQ(fo.expires, 1234);
}

TEST(MetadataValues, DamagedValuesDoNotDecode) {
  std::uint32_t used;
  // A value of another kind.
  const auto attr = codec::encode_value(AttrRecord{sample_attr(1), 1, 2, 3}, 5);
  LookupRecord l;
  EXPECT_FALSE(codec::decode_value(attr, l, used));
  // An impossible file type.
  auto bad_type = attr;
  bad_type[6 + 3] = 9;  // low byte of fattr.type
  AttrRecord a;
  EXPECT_FALSE(codec::decode_value(bad_type, a, used));
  // A handle longer than 64 bytes.
  auto lookup = codec::encode_value(LookupRecord{true, origin(10), 1, kNever}, 5);
  lookup[7] = 65;
  EXPECT_FALSE(codec::decode_value(lookup, l, used));
  // A listing whose count claims more entries than the bytes could hold.
  ListingRecord r;
  r.entries.push_back({1, 1, "x", {}});
  auto listing = codec::encode_value(r, 5);
  listing[6 + 8] = '\x7f';  // top byte of the entry count
  ListingRecord ro;
  EXPECT_FALSE(codec::decode_value(listing, ro, used));
  // Nothing at all.
  EXPECT_FALSE(codec::decode_value("", a, used));
  EXPECT_FALSE(codec::value_used_time("").has_value());
  EXPECT_FALSE(codec::value_used_time(std::string("\x01\x09\x00\x00\x00\x00", 6)).has_value());
}

TEST(ListingCookie, FixedValuesNeverZero) {
  // FNV-1a 64 masked to 63 bits: these values must never change (clients keep
  // cookies across restarts and upgrades).
  EXPECT_EQ(listing_cookie("hello"), 0x2430d84680aabd0bull);
  EXPECT_EQ(listing_cookie("index.php"), 0x0ada0715eb50af4dull);
  EXPECT_EQ(listing_cookie(""), 0x4bf29ce484222325ull);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    auto c = listing_cookie("name" + std::to_string(i));
    EXPECT_NE(c, 0u);
    EXPECT_LT(c, 1ull << 63);
    seen.insert(c);
  }
  EXPECT_EQ(seen.size(), 10000u);
}
