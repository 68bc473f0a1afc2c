#include "gateway/admin/admin_protocol.h"

#include <stdexcept>
#include <vector>

namespace nfsgw::admin {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool must_encode(unsigned char c) { return c <= 0x20 || c >= 0x7f || c == '%'; }

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t start = 0;
  for (;;) {
    const std::size_t sp = line.find(' ', start);
    tokens.push_back(line.substr(start, sp == std::string_view::npos ? sp : sp - start));
    if (sp == std::string_view::npos) return tokens;
    start = sp + 1;
  }
}

std::string quoted(std::string_view token) {
  constexpr std::size_t kMaxShown = 64;
  std::string shown = escape_line(token.substr(0, kMaxShown));
  if (token.size() > kMaxShown) shown += "...";
  return "'" + shown + "'";
}

Request parse_stats(const std::vector<std::string_view>& t) {
  if (t.size() == 2) return StatsRequest{};
  if (t.size() == 3 && t[2] == "text") return StatsRequest{false};
  if (t.size() == 3 && t[2] == "json") return StatsRequest{true};
  throw std::invalid_argument("usage: stats [text|json]");
}

Request parse_invalidate(const std::vector<std::string_view>& t) {
  if (t.size() != 5)
    throw std::invalid_argument("usage: invalidate <export-path> <subpath> <recursive 0|1>");
  InvalidateRequest r;
  r.export_path = percent_decode(t[2]);
  if (r.export_path.empty() || r.export_path[0] != '/')
    throw std::invalid_argument("the export path must start with '/': " + quoted(r.export_path));
  r.subpath = normalize_subpath(percent_decode(t[3]));
  if (t[4] == "0") {
    r.recursive = false;
  } else if (t[4] == "1") {
    r.recursive = true;
  } else {
    throw std::invalid_argument("recursive must be 0 or 1, not " + quoted(t[4]));
  }
  return r;
}

Request parse_reload(const std::vector<std::string_view>& t) {
  if (t.size() != 3) throw std::invalid_argument("usage: reload <config-path>");
  ReloadRequest r;
  r.config_path = percent_decode(t[2]);
  if (r.config_path.empty() || r.config_path[0] != '/')
    throw std::invalid_argument("the configuration path must be absolute: " + quoted(r.config_path));
  return r;
}

std::uint64_t parse_number(std::string_view token, std::uint64_t max, const char* what) {
  std::uint64_t v = 0;
  if (token.empty() || token.size() > 20 || token.find_first_not_of("0123456789") != std::string_view::npos)
    throw std::invalid_argument(std::string(what) + " must be a number, not " + quoted(token));
  for (const char c : token) {
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (v > max) throw std::invalid_argument(std::string(what) + " must be at most " + std::to_string(max) + ", not " + quoted(token));
  }
  return v;
}

Request parse_warm(const std::vector<std::string_view>& t) {
  if (t.size() != 8)
    throw std::invalid_argument(
        "usage: warm <export-path> <subpath> <depth|all> <data 0|1> <parallel> <manifest-count>");
  WarmRequest r;
  r.export_path = percent_decode(t[2]);
  if (r.export_path.empty() || r.export_path[0] != '/')
    throw std::invalid_argument("the export path must start with '/': " + quoted(r.export_path));
  r.subpath = normalize_subpath(percent_decode(t[3]));
  if (t[4] != "all") r.depth = static_cast<std::uint32_t>(parse_number(t[4], kMaxWarmDepth, "depth"));
  if (t[5] == "0" || t[5] == "1") {
    r.data = t[5] == "1";
  } else {
    throw std::invalid_argument("data must be 0 or 1, not " + quoted(t[5]));
  }
  r.parallel = static_cast<std::uint32_t>(parse_number(t[6], kMaxWarmParallel, "parallel"));
  if (r.parallel == 0) throw std::invalid_argument("parallel must be at least 1");
  r.manifest_count = parse_number(t[7], kMaxManifestPaths, "manifest-count");
  return r;
}

Request parse_flush(const std::vector<std::string_view>& t) {
  if (t.size() != 4) throw std::invalid_argument("usage: flush <export-path|*> <subpath>");
  FlushRequest r;
  r.subpath = normalize_subpath(percent_decode(t[3]));
  if (t[2] == "*") {
    if (!r.subpath.empty())
      throw std::invalid_argument("a flush of every export (*) takes no path inside it: " + quoted(t[3]));
    return r;
  }
  r.export_path = percent_decode(t[2]);
  if (r.export_path.empty() || r.export_path[0] != '/')
    throw std::invalid_argument("the export path must start with '/' (or be * for every export): " +
                                quoted(r.export_path));
  return r;
}

}  // namespace

std::string admin_socket_path(const std::string& cache_dir) {
  if (!cache_dir.empty() && cache_dir.back() == '/') return cache_dir + "admin.sock";
  return cache_dir + "/admin.sock";
}

std::string percent_encode(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (const char ch : raw) {
    const auto c = static_cast<unsigned char>(ch);
    if (must_encode(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string percent_decode(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      out += encoded[i];
      continue;
    }
    const int hi = i + 1 < encoded.size() ? hex_value(encoded[i + 1]) : -1;
    const int lo = i + 2 < encoded.size() ? hex_value(encoded[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      throw std::invalid_argument("bad percent-encoding at byte " + std::to_string(i) + " of " +
                                  quoted(encoded) + ": '%' must be followed by two hex digits");
    const char c = static_cast<char>(hi * 16 + lo);
    if (c == '\0') throw std::invalid_argument("a path cannot contain a NUL byte (%00)");
    out += c;
    i += 2;
  }
  return out;
}

std::string normalize_subpath(std::string_view path) {
  if (path.empty()) return {};
  if (path[0] != '/')
    throw std::invalid_argument("the path inside the export must start with '/': " + quoted(path));
  if (path.find('\0') != std::string_view::npos)
    throw std::invalid_argument("a path cannot contain a NUL byte");
  std::string out;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part == "." || part == "..")
      throw std::invalid_argument("'.' and '..' are not allowed in a path: " + quoted(path));
    if (!part.empty()) {
      out += '/';
      out += part;
    }
    start = end + 1;
  }
  return out;
}

Request parse_request(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) throw std::invalid_argument("empty request");
  const auto t = split_spaces(line);
  if (t[0] != kProtocolVersion) {
    if (t[0].size() >= 2 && t[0][0] == 'v' && t[0].find_first_not_of("0123456789", 1) == std::string_view::npos)
      throw std::invalid_argument("unsupported protocol version " + quoted(t[0]) + ": this nfsgw speaks " +
                                  std::string(kProtocolVersion));
    throw std::invalid_argument("bad request: expected '" + std::string(kProtocolVersion) +
                                " <command> ...', got " + quoted(line));
  }
  constexpr const char* kCommands = "stats, invalidate, reload, exports, warm or flush";
  if (t.size() < 2) throw std::invalid_argument(std::string("missing command: ") + kCommands);
  if (t[1] == "stats") return parse_stats(t);
  if (t[1] == "invalidate") return parse_invalidate(t);
  if (t[1] == "reload") return parse_reload(t);
  if (t[1] == "warm") return parse_warm(t);
  if (t[1] == "flush") return parse_flush(t);
  if (t[1] == "exports") {
    if (t.size() != 2) throw std::invalid_argument("usage: exports");
    return ExportsRequest{};
  }
  throw std::invalid_argument("unknown command " + quoted(t[1]) + ": " + kCommands);
}

std::string format_request(const Request& request) {
  std::string line(kProtocolVersion);
  if (const auto* s = std::get_if<StatsRequest>(&request)) {
    line += s->json ? " stats json" : " stats";
  } else if (const auto* r = std::get_if<ReloadRequest>(&request)) {
    line += " reload ";
    line += percent_encode(r->config_path);
  } else if (std::holds_alternative<ExportsRequest>(request)) {
    line += " exports";
  } else if (const auto* f = std::get_if<FlushRequest>(&request)) {
    line += " flush ";
    line += f->export_path.empty() ? std::string("*") : percent_encode(f->export_path);
    line += ' ';
    line += f->subpath.empty() ? std::string("/") : percent_encode(f->subpath);
  } else if (const auto* w = std::get_if<WarmRequest>(&request)) {
    line += " warm ";
    line += percent_encode(w->export_path);
    line += ' ';
    line += w->subpath.empty() ? std::string("/") : percent_encode(w->subpath);
    line += ' ';
    line += w->depth ? std::to_string(*w->depth) : std::string("all");
    line += w->data ? " 1 " : " 0 ";
    line += std::to_string(w->parallel);
    line += ' ';
    line += std::to_string(w->manifest.size());
    line += '\n';
    for (const auto& p : w->manifest) {
      line += p.empty() ? std::string("/") : percent_encode(p);
      line += '\n';
    }
    return line;
  } else {
    const auto& inv = std::get<InvalidateRequest>(request);
    line += " invalidate ";
    line += percent_encode(inv.export_path);
    line += ' ';
    line += inv.subpath.empty() ? std::string("/") : percent_encode(inv.subpath);
    line += inv.recursive ? " 1" : " 0";
  }
  line += '\n';
  return line;
}

std::string parse_manifest_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) throw std::invalid_argument("empty manifest line");
  return normalize_subpath(percent_decode(line));
}

std::string escape_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string ok_line() { return "ok\n"; }

std::string error_line(std::string_view message) {
  return "error " + escape_line(message.empty() ? std::string_view("unknown error") : message) + "\n";
}

}  // namespace nfsgw::admin
