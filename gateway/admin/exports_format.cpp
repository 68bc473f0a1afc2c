#include "gateway/admin/exports_format.h"

#include <fmt/format.h>

#include "config/duration.h"
#include "gateway/admin/stats_format.h"

namespace nfsgw::admin {

namespace {

const char* squash_name(config::Squash s) {
  return s == config::Squash::None ? "none" : s == config::Squash::Root ? "root" : "all";
}

std::string clients(const config::ExportConfig& e) {
  std::string out;
  for (const auto& c : e.clients) out += (out.empty() ? "" : ", ") + c.text;
  return out.empty() ? std::string("none") : out;
}

std::string windows(const cache::CoherencySettings& c) {
  std::string out = cache::consistency_name(c.consistency);
  out += ", access_check ";
  out += c.access_check == cache::AccessCheck::Local ? "local" : "origin";
  for (const auto& d : cache::kDurationSettings)
    out += fmt::format(", {} {}", d.key, config::format_duration(c.*(d.field)));
  return out;
}

std::string origin_state(const ExportStatus& s) {
  const unsigned want = s.config->upstream_connections;
  const std::string conns = fmt::format("{} of {} connections up", s.connections_up, want);
  if (s.connections_up == 0) return "DOWN: " + conns + (s.root_known ? ", root handle known from before" : ", not mounted yet");
  return (s.connections_up < want ? "degraded: " : "up: ") + conns +
         (s.root_known ? ", mounted" : ", not mounted yet");
}

std::string export_block(const ExportStatus& s) {
  const config::ExportConfig& e = *s.config;
  std::string out = fmt::format("export {}\n", e.path);
  out += fmt::format("  origin        {}\n", e.origin.text);
  out += fmt::format("  connection    {}, timeout {}\n", origin_state(s), config::format_duration(e.origin_timeout));
  out += fmt::format("  policy        {}, squash {} (anonymous {}:{}), clients {}\n",
                     e.access == config::Access::ReadOnly ? "ro" : "rw", squash_name(e.squash), e.anon_uid,
                     e.anon_gid, clients(e));
  if (s.metadata_cache) {
    out += fmt::format("  metadata      on: {}\n", windows(e.coherency));
  } else {
    out += "  metadata      off (metadata_cache = false): every call goes to the origin\n";
  }
  if (s.data_cache) {
    out += fmt::format("  data          on, read-ahead {} KiB\n", e.readahead_kb);
  } else {
    out += std::string("  data          off") +
           (e.data_cache ? (s.metadata_cache ? " (the data store could not be opened)" : " (needs the metadata cache)")
                         : " (data_cache = false)") +
           "\n";
  }
  out += fmt::format("  warm as       uid {} gid {} (before squash)\n", e.warm_uid.value_or(e.anon_uid),
                     e.warm_gid.value_or(e.anon_gid));
  return out;
}

}  // namespace

std::string format_exports_text(const ExportsView& view) {
  std::string out;
  if (view.exports.empty()) out += "no exports\n";
  for (const auto& s : view.exports) {
    if (!s.config) continue;
    out += export_block(s);
    out += '\n';
  }
  out += "cache (shared by every export)\n";
  cache::TableUsage total;
  for (const auto& u : view.store.tables) {
    total.memory_entries += u.memory_entries;
    total.memory_bytes += u.memory_bytes;
    total.disk_entries += u.disk_entries;
    total.disk_bytes += u.disk_bytes;
  }
  out += fmt::format("  metadata      {} entries in memory ({}), {} on disk ({} of {}){}\n", total.memory_entries,
                     format_size(total.memory_bytes), total.disk_entries, format_size(total.disk_bytes),
                     format_size(view.metadata_budget), view.store.degraded ? ", DISK DEGRADED: memory only" : "");
  if (view.blocks) {
    const auto& b = *view.blocks;
    out += fmt::format("  data          {} files, {} blocks, {} of {}\n", b.files, b.blocks, format_size(b.bytes),
                       format_size(b.budget));
  } else {
    out += "  data          no data store\n";
  }
  return out;
}

}  // namespace nfsgw::admin
