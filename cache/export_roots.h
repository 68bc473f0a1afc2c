// Each export's origin root handle, kept in the database beside the handle map
// (default family, synced, never evicted), so that after a restart nfsgw can
// answer from its cache before the origin has answered MNT, or while it cannot.
#pragma once

#include <cstdint>
#include <optional>

#include "cache/kv_store.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::cache {

class ExportRoots {
 public:
  explicit ExportRoots(KvStore& store) : store_(store) {}
  /// Throws std::runtime_error on an I/O error.
  std::optional<nfs3::FileHandle> load(std::uint32_t export_id);
  /// Writes only when the handle changed. Throws std::runtime_error on an I/O error.
  void save(std::uint32_t export_id, const nfs3::FileHandle& root);

 private:
  KvStore& store_;
};

}  // namespace nfsgw::cache
