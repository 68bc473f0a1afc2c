// The running gateway's answers to the admin socket (`nfsgw stats`,
// `nfsgw invalidate`), over each export's metadata and data caches.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/block_store.h"
#include "cache/metadata_store.h"
#include "config/config.h"
#include "gateway/admin/admin_commands.h"
#include "gateway/datacache/data_cache.h"
#include "gateway/metacache/metadata_cache.h"

namespace nfsgw {

class CacheAdmin final : public admin::AdminCommands {
 public:
  struct Export {
    const config::ExportConfig* config = nullptr;
    metacache::MetadataCache* cache = nullptr;  // null: metadata_cache = false
    datacache::DataCache* data = nullptr;       // null: no data cache for this export
    /// The origin's root handle of the export when known (stored or answered).
    std::function<std::optional<nfs3::FileHandle>()> root;
  };

  /// `blocks`: the data cache's store, null when there is none.
  CacheAdmin(cache::MetadataStore& store, cache::BlockStore* blocks, std::vector<Export> exports)
      : store_(store), blocks_(blocks), exports_(std::move(exports)) {}

  /// Where report() reads the duplicate request cache's counts (unset: none).
  void use_duplicate_counts(std::function<metacache::DuplicateCounts()> counts) {
    duplicate_counts_ = std::move(counts);
  }

  metacache::Report report() override;
  std::string invalidate(const std::string& export_path, const std::string& subpath,
                         bool recursive) override;
  /// Runs the hook set with on_reload(); without one, refuses.
  std::string reload(const std::string& config_path) override;

  /// A configuration reload: the exports from now on. Thread-safe.
  void set_exports(std::vector<Export> exports);
  /// What `nfsgw reload` runs (gateway/reload/reloader.h).
  void on_reload(std::function<std::string(const std::string&)> hook) { reload_ = std::move(hook); }

 private:
  std::vector<Export> exports() const;

  cache::MetadataStore& store_;
  cache::BlockStore* blocks_;
  mutable std::mutex mu_;  // guards exports_
  std::vector<Export> exports_;
  std::function<std::string(const std::string&)> reload_;
  std::function<metacache::DuplicateCounts()> duplicate_counts_;
};

}  // namespace nfsgw
