#include "gateway/app/cache_admin.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace nfsgw {
namespace {

std::vector<std::string> components(const std::string& subpath) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < subpath.size()) {
    if (subpath[pos] == '/') {
      ++pos;
      continue;
    }
    const auto next = subpath.find('/', pos);
    out.push_back(subpath.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    pos = next == std::string::npos ? subpath.size() : next;
  }
  return out;
}

}  // namespace

std::vector<CacheAdmin::Export> CacheAdmin::exports() const {
  std::lock_guard lock(mu_);
  return exports_;
}

void CacheAdmin::set_exports(std::vector<Export> exports) {
  std::lock_guard lock(mu_);
  exports_ = std::move(exports);
}

std::string CacheAdmin::reload(const std::string& config_path) {
  if (!reload_) throw std::invalid_argument("this gateway cannot reload its configuration");
  return reload_(config_path);
}

stats::Report CacheAdmin::report() {
  stats::Report r;
  for (const auto& e : exports()) {
    metacache::ExportReport x;
    x.path = e.config->path;
    x.cache_enabled = e.cache != nullptr;
    x.consistency = cache::consistency_name(e.config->coherency.consistency);
    if (e.cache) {
      for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p)
        x.procs[p] = e.cache->counters().get(static_cast<nfs3::Proc>(p));
    }
    std::optional<datacache::DataCounts> data;
    if (e.data) data = e.data->stats().snapshot();
    r.exports.push_back({std::move(x), data});
  }
  r.store = store_.usage();
  if (blocks_) r.blocks = blocks_->usage();
  if (duplicate_counts_) r.duplicates = duplicate_counts_();
  if (write_back_counts_) r.write_back = write_back_counts_();
  return r;
}

void CacheAdmin::unknown_export(const std::string& path, const std::vector<Export>& all) {
  std::string known;
  for (const auto& e : all) known += (known.empty() ? "" : ", ") + e.config->path;
  throw std::invalid_argument("no export " + path + "; exports: " + known);
}

void CacheAdmin::flush(const std::string& export_path, const std::string& subpath,
                       std::shared_ptr<writeback::FlushProgress> progress,
                       std::function<void(writeback::FlushOutcome)> done) {
  if (!export_path.empty()) {
    const std::vector<Export> all = exports();
    if (std::none_of(all.begin(), all.end(), [&](const Export& e) { return e.config->path == export_path; }))
      unknown_export(export_path, all);
  }
  if (!flush_) {
    done({true, "nothing to flush: no export writes back"});
    return;
  }
  flush_(export_path, subpath, std::move(progress), std::move(done));
}

std::string CacheAdmin::invalidate(const std::string& export_path, const std::string& subpath,
                                   bool recursive) {
  const std::vector<Export> all = exports();
  for (const auto& e : all) {
    if (e.config->path != export_path) continue;
    if (!e.cache) throw std::invalid_argument("export " + export_path + " has metadata_cache = false: nothing is cached");
    const auto root = e.root();
    if (!root) {
      // Nothing can have been cached for an export whose root was never known.
      return "nothing cached for " + export_path + " yet";
    }
    // File data goes with the metadata that vouched for it.
    datacache::DataCache* data = e.data;
    std::function<void(const nfs3::FileHandle&)> drop_data;
    if (data) drop_data = [data](const nfs3::FileHandle& fh) { data->drop_file(fh); };
    const auto dropped = e.cache->invalidate(*root, components(subpath), recursive, drop_data);
    const std::string where = export_path + subpath;
    if (!dropped) throw std::invalid_argument(where + " is not in the cache (nothing to drop)");
    if (subpath.empty() && recursive) {
      if (data) data->drop_all();
      return "dropped every entry of " + where + (data ? " and its file data" : "");
    }
    return "dropped the entries of " + std::to_string(*dropped) + " object" + (*dropped == 1 ? "" : "s") +
           " under " + where;
  }
  unknown_export(export_path, all);
}

}  // namespace nfsgw
