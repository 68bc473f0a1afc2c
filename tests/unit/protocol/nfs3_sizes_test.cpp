// nfs3_sizes.h: every size equals the bytes the codec writes, and the transfer
// limit leaves room for the largest WRITE call in a record.
#include <gtest/gtest.h>

#include "protocol/nfs3_codec.h"
#include "protocol/nfs3_sizes.h"

namespace nfsgw::nfs3 {
namespace {

template <typename Res>
std::size_t bytes_of(const Res& r) {
  std::vector<std::uint8_t> out;
  xdr::Writer w(out);
  encode(w, r);
  return out.size();
}

FileHandle handle(std::size_t len) {
  std::vector<std::uint8_t> b(len, 0x5a);
  return FileHandle(b);
}

TEST(Nfs3Sizes, ReaddirplusSizeIsWhatTheCodecWrites) {
  ReaddirplusRes r;
  EXPECT_EQ(encoded_size(r), bytes_of(r));  // no attributes, no entries
  r.dir_attributes = Fattr{};
  EXPECT_EQ(encoded_size(r), bytes_of(r));
  // Names of every padding, with and without attributes and handles of odd sizes.
  for (std::size_t n = 1; n <= 9; ++n) {
    DirEntryPlus e{n, std::string(n, 'x'), n * 7, std::nullopt, std::nullopt};
    if (n % 2) e.name_attributes = Fattr{};
    if (n % 3) e.name_handle = handle(n * 7);
    r.entries.push_back(e);
    EXPECT_EQ(encoded_size(r), bytes_of(r)) << n << " entries";
  }
  r.status = Status::Acces;
  EXPECT_EQ(encoded_size(r), bytes_of(r));
}

TEST(Nfs3Sizes, ReaddirSizeIsWhatTheCodecWrites) {
  ReaddirRes r;
  r.dir_attributes = Fattr{};
  for (std::size_t n = 0; n <= 9; ++n) {
    EXPECT_EQ(encoded_size(r), bytes_of(r)) << n << " entries";
    r.entries.push_back(DirEntry{n, std::string(n + 1, 'y'), n});
  }
  r.status = Status::NotDir;
  EXPECT_EQ(encoded_size(r), bytes_of(r));
}

TEST(Nfs3Sizes, TransferLimitLeavesRoomForTheLargestWriteCall) {
  // The default record (4 MiB) carries the largest payload nfsgw decodes.
  EXPECT_EQ(max_transfer_for_record(4u << 20), kMaxData);
  // A small record: a WRITE of the limit with the largest header still fits.
  for (std::size_t record : {std::size_t{64 * 1024}, std::size_t{100 * 1000}, std::size_t{1u << 20}}) {
    const std::uint32_t t = max_transfer_for_record(record);
    EXPECT_GT(t, 0u);
    EXPECT_EQ(t % 4096, 0u);
    EXPECT_LE(kMaxCallHeaderBytes + kWriteArgsOverhead + t, record) << record;
  }
  EXPECT_EQ(max_transfer_for_record(1024), 0u);
}

}  // namespace
}  // namespace nfsgw::nfs3
