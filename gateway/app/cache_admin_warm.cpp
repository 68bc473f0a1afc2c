// CacheAdmin's `nfsgw exports` and `nfsgw warm`.
#include "gateway/admin/exports_format.h"
#include "gateway/app/cache_admin.h"

#include <stdexcept>

namespace nfsgw {

std::string CacheAdmin::exports_table() {
  admin::ExportsView view;
  const std::vector<Export> all = exports();
  for (const auto& e : all) {
    admin::ExportStatus s;
    s.config = e.config;
    s.metadata_cache = e.cache != nullptr;
    s.data_cache = e.data != nullptr;
    s.connections_up = e.connections_up ? e.connections_up() : 0;
    s.root_known = e.root && e.root().has_value();
    view.exports.push_back(s);
  }
  view.store = store_.usage();
  if (blocks_) view.blocks = blocks_->usage();
  view.metadata_budget = metadata_budget_;
  return admin::format_exports_text(view);
}

void CacheAdmin::warm(const admin::WarmRequest& request, std::shared_ptr<warm::WarmProgress> progress,
                      std::function<void(warm::WarmOutcome)> done) {
  if (!warm_) throw std::invalid_argument("warm is not available in this gateway");
  const std::vector<Export> all = exports();
  for (const auto& e : all) {
    if (e.config->path != request.export_path) continue;
    warm::WarmExport w;
    w.config = e.config;
    w.metadata_cache = e.cache != nullptr;
    w.data_cache = e.data != nullptr;
    metacache::MetadataCache* mc = e.cache;
    datacache::DataCache* dc = e.data;
    w.traffic = [mc, dc] {
      warm::OriginTraffic t;
      if (mc) {
        for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p)
          t.calls += mc->counters().get(static_cast<nfs3::Proc>(p)).origin_calls;
      }
      if (dc) {
        const auto d = dc->stats().snapshot();
        t.blocks = d.blocks_fetched;
        t.bytes = d.bytes_fetched;
      }
      return t;
    };
    warm::start_warm(*warm_, w, request, std::move(progress), std::move(done));
    return;
  }
  unknown_export(request.export_path, all);
}

}  // namespace nfsgw
