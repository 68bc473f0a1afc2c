#include "gateway/admin/stats_format.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "protocol/nfs3_types.h"

namespace nfsgw::admin {

namespace {

/// Columns sized to their widest cell: the first left-aligned, the others right.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render(std::string_view indent) const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_) {
      width.resize(std::max(width.size(), row.size()), 0);
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line(indent);
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i == 0) {
          line += fmt::format("{:<{}}", row[i], width[i]);
        } else {
          line += fmt::format("  {:>{}}", row[i], width[i]);
        }
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line;
      out += '\n';
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string num(std::uint64_t n) { return std::to_string(n); }

std::string export_header(const metacache::ExportReport& e) {
  std::string line = "export " + e.path + "  cache " + (e.cache_enabled ? "on" : "off");
  if (!e.consistency.empty()) line += "  consistency " + e.consistency;
  return line + '\n';
}

std::string export_table(const metacache::ExportReport& e) {
  Table t({"procedure", "calls", "hits", "misses", "revalidations", "origin calls", "hit %"});
  metacache::ProcCounts total;
  unsigned rows = 0;
  for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) {
    const auto& c = e.procs[p];
    if (c.calls == 0) continue;
    t.add({nfs3::proc_name(p), num(c.calls), num(c.hits), num(c.misses), num(c.revalidations),
           num(c.origin_calls), percent(c.hits, c.calls)});
    total.calls += c.calls;
    total.hits += c.hits;
    total.misses += c.misses;
    total.revalidations += c.revalidations;
    total.origin_calls += c.origin_calls;
    ++rows;
  }
  if (rows == 0) return "  no calls yet\n";
  if (rows > 1)
    t.add({"total", num(total.calls), num(total.hits), num(total.misses), num(total.revalidations),
           num(total.origin_calls), percent(total.hits, total.calls)});
  return t.render("  ");
}

std::string data_line(const std::optional<datacache::DataCounts>& data) {
  if (!data) return "  data cache off\n";
  const auto& d = *data;
  return fmt::format(
      "  data: reads {} (hits {}, misses {}, forwarded {}, hit % {}); blocks fetched {} ({}), read ahead {};"
      " from cache {}; writes {} (patched {}); files dropped {}; store errors {}\n",
      d.reads, d.read_hits, d.read_misses, d.forwarded, percent(d.read_hits, d.reads), d.blocks_fetched,
      format_size(d.bytes_fetched), d.blocks_read_ahead, format_size(d.bytes_from_cache), d.write_through,
      d.blocks_patched, d.files_dropped, d.store_errors);
}

std::string blocks_section(const cache::BlockUsage& b) {
  return fmt::format(
      "data store\n  {} files, {} blocks, {} of {}\n  reads: {} hits, {} misses, {} corrupt blocks dropped\n"
      "  evicted: {} files, {} blocks, {}\n",
      b.files, b.blocks, format_size(b.bytes), format_size(b.budget), b.read_hits, b.read_misses,
      b.corrupt_dropped, b.evicted_files, b.evicted_blocks, format_size(b.evicted_bytes));
}

std::string store_section(const cache::StoreUsage& s) {
  std::string out = "store\n";
  if (s.tables.empty()) {
    out += "  no record kinds reported\n";
  } else {
    Table t({"kind", "entries in memory", "in memory", "entries on disk", "on disk"});
    cache::TableUsage total;
    for (const auto& u : s.tables) {
      t.add({u.name ? u.name : "?", num(u.memory_entries), format_size(u.memory_bytes), num(u.disk_entries),
             format_size(u.disk_bytes)});
      total.memory_entries += u.memory_entries;
      total.memory_bytes += u.memory_bytes;
      total.disk_entries += u.disk_entries;
      total.disk_bytes += u.disk_bytes;
    }
    if (s.tables.size() > 1)
      t.add({"total", num(total.memory_entries), format_size(total.memory_bytes),
             num(total.disk_entries), format_size(total.disk_bytes)});
    out += t.render("  ");
  }
  out += fmt::format("  evicted: {} from memory, {} from disk (budget)\n", s.evicted_memory,
                     s.evicted_disk);
  if (s.pending_limit > 0)
    out += fmt::format("  writes not yet on disk: {} (most {} of {}), {} writers waited, {} time refreshes skipped\n",
                       format_size(s.pending_bytes), format_size(s.pending_peak), format_size(s.pending_limit),
                       s.pending_waits, s.touches_skipped);
  out += s.degraded ? "  disk: DEGRADED: the cache disk failed, records are kept in memory only\n"
                    : "  disk: ok\n";
  return out;
}

std::string duplicates_section(const rpc::DuplicateCacheCounts& d) {
  return fmt::format(
      "duplicate request cache\n  {} calls remembered; retransmissions: {} answered with the kept reply, {} waited "
      "for the first call\n",
      d.entries, d.replayed, d.waited);
}

/// Milliseconds as seconds for people: "0.4 s", "42.5 s", "3600.0 s".
std::string seconds(std::uint64_t ms) { return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0); }

std::string write_back_section(const writeback::WriteBackCounts& w) {
  std::string out = "write-back\n";
  if (w.dirty_files == 0 && w.dirty_bytes == 0) {
    out += "  nothing dirty";
  } else {
    out += fmt::format("  dirty: {} in {} files, the oldest written {} ago", format_size(w.dirty_bytes), w.dirty_files,
                       seconds(w.oldest_dirty_age_ms));
  }
  out += fmt::format("; log {} of {}\n", format_size(w.log_bytes), format_size(w.budget_bytes));
  out += fmt::format(
      "  absorbed: {} writes ({}); flushed: {} in {} files ({} WRITEs, {} COMMITs to the origin)\n",
      w.writes_absorbed, format_size(w.bytes_absorbed), format_size(w.flushed_bytes), w.flushed_files, w.flush_writes,
      w.flush_commits);
  out += fmt::format(
      "  retries {}, verifier changes {}, conflicts {}, stale dropped {}; budget waits {} (jukebox {}); log errors "
      "{}\n",
      w.retries, w.verifier_changes, w.conflicts, w.stale_dropped, w.budget_waits, w.budget_jukebox, w.log_errors);
  return out;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += ch;
    }
  }
  return out + '"';
}

}  // namespace

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  // Round first, so that 1048575 bytes reads "1.0 MiB", not "1024.0 KiB".
  while (unit + 1 < std::size(kUnits) && v >= 1023.95) {
    v /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string format_stats_text(const stats::Report& report) {
  std::string out;
  if (report.exports.empty()) out += "no exports\n";
  for (const auto& e : report.exports) {
    out += export_header(e.metadata);
    out += export_table(e.metadata);
    out += data_line(e.data);
    out += '\n';
  }
  out += store_section(report.store);
  if (report.blocks) out += blocks_section(*report.blocks);
  if (report.duplicates) out += duplicates_section(*report.duplicates);
  if (report.write_back) out += write_back_section(*report.write_back);
  return out;
}

std::string format_stats_json(const stats::Report& report) {
  std::string out = "{\"exports\":[";
  for (std::size_t i = 0; i < report.exports.size(); ++i) {
    const auto& e = report.exports[i].metadata;
    if (i) out += ',';
    out += fmt::format("{{\"path\":{},\"cache_enabled\":{},\"consistency\":{},\"procedures\":{{",
                       json_string(e.path), e.cache_enabled, json_string(e.consistency));
    bool first = true;
    for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) {
      const auto& c = e.procs[p];
      if (c.calls == 0) continue;
      if (!first) out += ',';
      first = false;
      out += fmt::format(
          "{}:{{\"calls\":{},\"hits\":{},\"misses\":{},\"revalidations\":{},\"origin_calls\":{}}}",
          json_string(nfs3::proc_name(p)), c.calls, c.hits, c.misses, c.revalidations, c.origin_calls);
    }
    out += "}";
    if (const auto& data = report.exports[i].data) {
      const auto& d = *data;
      out += fmt::format(
          ",\"data\":{{\"reads\":{},\"read_hits\":{},\"read_misses\":{},\"forwarded\":{},\"blocks_fetched\":{},"
          "\"bytes_fetched\":{},\"blocks_read_ahead\":{},\"bytes_from_cache\":{},\"write_through\":{},"
          "\"blocks_patched\":{},\"files_dropped\":{},\"store_errors\":{}}}",
          d.reads, d.read_hits, d.read_misses, d.forwarded, d.blocks_fetched, d.bytes_fetched, d.blocks_read_ahead,
          d.bytes_from_cache, d.write_through, d.blocks_patched, d.files_dropped, d.store_errors);
    } else {
      out += ",\"data\":null";
    }
    out += "}";
  }
  const auto& s = report.store;
  out += "],\"store\":{\"tables\":[";
  for (std::size_t i = 0; i < s.tables.size(); ++i) {
    const auto& u = s.tables[i];
    if (i) out += ',';
    out += fmt::format(
        "{{\"name\":{},\"memory_entries\":{},\"memory_bytes\":{},\"disk_entries\":{},\"disk_bytes\":{}}}",
        json_string(u.name ? u.name : ""), u.memory_entries, u.memory_bytes, u.disk_entries, u.disk_bytes);
  }
  out += fmt::format("],\"evicted_memory\":{},\"evicted_disk\":{},\"degraded\":{}}}", s.evicted_memory,
                     s.evicted_disk, s.degraded);
  if (report.blocks) {
    const auto& b = *report.blocks;
    out += fmt::format(
        ",\"data_store\":{{\"files\":{},\"blocks\":{},\"bytes\":{},\"budget\":{},\"read_hits\":{},"
        "\"read_misses\":{},\"corrupt_dropped\":{},\"evicted_files\":{},\"evicted_blocks\":{},"
        "\"evicted_bytes\":{}}}",
        b.files, b.blocks, b.bytes, b.budget, b.read_hits, b.read_misses, b.corrupt_dropped, b.evicted_files,
        b.evicted_blocks, b.evicted_bytes);
  } else {
    out += ",\"data_store\":null";
  }
  if (report.duplicates) {
    const auto& d = *report.duplicates;
    out += fmt::format(",\"duplicate_cache\":{{\"entries\":{},\"replayed\":{},\"waited\":{}}}", d.entries,
                       d.replayed, d.waited);
  }
  if (report.write_back) {
    const auto& w = *report.write_back;
    out += fmt::format(
        ",\"write_back\":{{\"dirty_bytes\":{},\"dirty_files\":{},\"log_bytes\":{},\"budget_bytes\":{},"
        "\"oldest_dirty_age_ms\":{},\"writes_absorbed\":{},\"bytes_absorbed\":{},\"flushed_bytes\":{},"
        "\"flushed_files\":{},\"flush_writes\":{},\"flush_commits\":{},\"retries\":{},\"verifier_changes\":{},"
        "\"conflicts\":{},\"stale_dropped\":{},\"budget_waits\":{},\"budget_jukebox\":{},\"log_errors\":{}}}",
        w.dirty_bytes, w.dirty_files, w.log_bytes, w.budget_bytes, w.oldest_dirty_age_ms, w.writes_absorbed,
        w.bytes_absorbed, w.flushed_bytes, w.flushed_files, w.flush_writes, w.flush_commits, w.retries,
        w.verifier_changes, w.conflicts, w.stale_dropped, w.budget_waits, w.budget_jukebox, w.log_errors);
  }
  out += "}\n";
  return out;
}

}  // namespace nfsgw::admin
