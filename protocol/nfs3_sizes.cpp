#include "protocol/nfs3_sizes.h"

#include <algorithm>

namespace nfsgw::nfs3 {
namespace {

constexpr std::size_t kFattrSize = 84;  // fattr3
constexpr std::size_t kVerfSize = kCookieVerfSize;

std::size_t post_op_attr_size(const PostOpAttr& a) { return 4 + (a ? kFattrSize : 0); }
std::size_t post_op_fh_size(const PostOpFh& fh) { return 4 + (fh ? xdr_var_size(fh->len) : 0); }

/// fileid, name, cookie: what both entry kinds start with.
std::size_t entry_core(std::uint64_t, const std::string& name) { return 8 + xdr_var_size(name.size()) + 8; }

template <typename Res>
std::size_t dir_res_size(const Res& r) {
  std::size_t n = 4 + post_op_attr_size(r.dir_attributes);
  if (r.status != Status::Ok) return n;
  n += kVerfSize;
  for (const auto& e : r.entries) n += encoded_size(e);
  return n + 4 + 4;  // end of the list, eof
}

}  // namespace

std::size_t encoded_size(const DirEntry& e) { return 4 + entry_core(e.fileid, e.name); }

std::size_t encoded_size(const DirEntryPlus& e) {
  return 4 + entry_core(e.fileid, e.name) + post_op_attr_size(e.name_attributes) + post_op_fh_size(e.name_handle);
}

std::size_t encoded_size(const ReaddirRes& r) { return dir_res_size(r); }
std::size_t encoded_size(const ReaddirplusRes& r) { return dir_res_size(r); }

std::uint32_t max_transfer_for_record(std::size_t record_bytes) {
  constexpr std::size_t kPage = 4096;
  const std::size_t overhead = kMaxCallHeaderBytes + kWriteArgsOverhead;
  if (record_bytes <= overhead + kPage) return 0;
  const std::size_t fit = std::min<std::size_t>(record_bytes - overhead, kMaxData);
  return static_cast<std::uint32_t>(fit / kPage * kPage);
}

}  // namespace nfsgw::nfs3
