#include "cache/export_roots.h"

#include <string>

namespace nfsgw::cache {
namespace {

// Apart from the handle map's "fh/" keys.
std::string key(std::uint32_t id) {
  std::string k = "export/root/";
  for (int shift = 24; shift >= 0; shift -= 8) k.push_back(static_cast<char>((id >> shift) & 0xff));
  return k;
}

}  // namespace

std::optional<nfs3::FileHandle> ExportRoots::load(std::uint32_t export_id) {
  auto v = store_.get(key(export_id));
  if (!v || v->empty() || v->size() > nfs3::kFhSize) return std::nullopt;
  return nfs3::FileHandle(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(v->data()), v->size()));
}

void ExportRoots::save(std::uint32_t export_id, const nfs3::FileHandle& root) {
  if (root.empty()) return;
  if (auto old = load(export_id); old && *old == root) return;
  store_.put(key(export_id), std::string(reinterpret_cast<const char*>(root.bytes.data()), root.len));
}

}  // namespace nfsgw::cache
