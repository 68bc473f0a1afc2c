// The running gateway's answers to the admin socket (`nfsgw stats`,
// `nfsgw invalidate`, `nfsgw exports`, `nfsgw warm`, `nfsgw flush`), over each
// export's metadata and data caches and the write-back machinery.
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
#include "gateway/warm/warm_command.h"
#include "gateway/writeback/write_back_types.h"

namespace nfsgw {

class CacheAdmin final : public admin::AdminCommands {
 public:
  struct Export {
    const config::ExportConfig* config = nullptr;
    metacache::MetadataCache* cache = nullptr;  // null: metadata_cache = false
    datacache::DataCache* data = nullptr;       // null: no data cache for this export
    /// The origin's root handle of the export when known (stored or answered).
    std::function<std::optional<nfs3::FileHandle>()> root;
    /// NFS connections to the origin that are up (`nfsgw exports`); null: 0.
    std::function<std::size_t()> connections_up;
  };

  /// `blocks`: the data cache's store, null when there is none.
  CacheAdmin(cache::MetadataStore& store, cache::BlockStore* blocks, std::vector<Export> exports)
      : store_(store), blocks_(blocks), exports_(std::move(exports)) {}

  /// Where report() reads the duplicate request cache's counts (unset: none).
  void use_duplicate_counts(std::function<rpc::DuplicateCacheCounts()> counts) {
    duplicate_counts_ = std::move(counts);
  }

  /// Where report() reads the write-back counts (unset: no dirty log, no section).
  void use_write_back_counts(std::function<writeback::WriteBackCounts()> counts) {
    write_back_counts_ = std::move(counts);
  }

  /// What `nfsgw warm` walks through, and the metadata disk budget `nfsgw exports`
  /// shows. Before the admin server starts; without it, warm is refused.
  void enable_warm(warm::WarmEnvironment env, std::uint64_t metadata_budget) {
    warm_ = std::move(env);
    metadata_budget_ = metadata_budget;
  }

  stats::Report report() override;
  std::string invalidate(const std::string& export_path, const std::string& subpath,
                         bool recursive) override;
  /// Runs the hook set with on_reload(); without one, refuses.
  std::string reload(const std::string& config_path) override;

  /// A configuration reload: the exports from now on. Thread-safe.
  void set_exports(std::vector<Export> exports);
  /// What `nfsgw reload` runs (gateway/reload/reloader.h).
  void on_reload(std::function<std::string(const std::string&)> hook) { reload_ = std::move(hook); }
  std::string exports_table() override;
  void warm(const admin::WarmRequest& request, std::shared_ptr<warm::WarmProgress> progress,
            std::function<void(warm::WarmOutcome)> done) override;

  using FlushHook = std::function<void(const std::string& export_path, const std::string& subpath,
                                       std::shared_ptr<writeback::FlushProgress>,
                                       std::function<void(writeback::FlushOutcome)>)>;
  /// What `nfsgw flush` runs once the export is known ("" export_path: every
  /// export); called as flush() is. Before the admin server starts.
  void on_flush(FlushHook hook) { flush_ = std::move(hook); }
  /// Refuses an unknown export (std::invalid_argument); without a hook (no dirty
  /// log) succeeds at once: nothing can be dirty.
  void flush(const std::string& export_path, const std::string& subpath,
             std::shared_ptr<writeback::FlushProgress> progress,
             std::function<void(writeback::FlushOutcome)> done) override;

 private:
  std::vector<Export> exports() const;
  /// Throws std::invalid_argument: `path` is none of `all`, which it names.
  [[noreturn]] static void unknown_export(const std::string& path, const std::vector<Export>& all);

  cache::MetadataStore& store_;
  cache::BlockStore* blocks_;
  mutable std::mutex mu_;  // guards exports_
  std::vector<Export> exports_;
  std::function<std::string(const std::string&)> reload_;
  std::function<rpc::DuplicateCacheCounts()> duplicate_counts_;
  std::function<writeback::WriteBackCounts()> write_back_counts_;
  FlushHook flush_;
  std::optional<warm::WarmEnvironment> warm_;
  std::uint64_t metadata_budget_ = 0;
};

}  // namespace nfsgw
