#include "gateway/nlm/nsm_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <sstream>
#include <string_view>

namespace nfsgw::nlm {

namespace nsm_record_cpp {

constexpr std::string_view kMagic = "nfsgw-nsm 1";
constexpr std::size_t kMaxFileBytes = 8 * 1024 * 1024;

std::string errno_text(const std::string& what, const std::filesystem::path& p) {
  return what + " " + p.string() + ": " + std::strerror(errno);
}

bool parse_int(std::string_view s, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
  if (s.empty()) return false;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return false;
  out = v;
  return true;
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t tab = line.find('\t', start);
    if (tab == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
}

std::string invalid_field(std::string_view what, std::string_view v) {
  if (v.empty()) return std::string(what) + " is empty";
  if (v.size() > kMaxNsmField) {
    return std::string(what) + " of " + std::to_string(v.size()) + " bytes (at most 1024)";
  }
  if (v.find_first_of(std::string_view("\t\n\r\0", 4)) != std::string_view::npos) {
    return std::string(what) + " holds a tab, newline, carriage return or NUL";
  }
  return {};
}

/// Writes all of `data` to `fd`.
bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string encode(const NsmRecord& r) {
  std::ostringstream out;
  out << kMagic << '\n' << "state\t" << r.state << '\n';
  for (const MonitoredHost& h : r.hosts) {
    out << "host\t" << h.mon_name << '\t' << h.address << '\t' << h.my_name << '\n';
  }
  out << "end\t" << r.hosts.size() << '\n';
  return out.str();
}

/// Parses the file's text; "" on success.
std::string decode(std::string_view text, NsmRecord& r) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return "the last line has no newline (cut short)";
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (lines.size() < 3) return "cut short (" + std::to_string(lines.size()) + " lines)";
  if (lines[0] != kMagic) return "not an nfsgw NSM record (first line)";
  auto state = split_tabs(lines[1]);
  std::int64_t v = 0;
  if (state.size() != 2 || state[0] != "state" ||
      !parse_int(state[1], 0, std::numeric_limits<std::int32_t>::max(), v)) {
    return "line 2: not \"state <n>\"";
  }
  r.state = static_cast<std::int32_t>(v);
  auto end = split_tabs(lines.back());
  std::int64_t count = 0;
  if (end.size() != 2 || end[0] != "end" ||
      !parse_int(end[1], 0, static_cast<std::int64_t>(kMaxMonitoredHosts), count)) {
    return "no end line (cut short)";
  }
  if (static_cast<std::size_t>(count) != lines.size() - 3) {
    return "end line counts " + std::to_string(count) + " hosts, the file holds " +
           std::to_string(lines.size() - 3);
  }
  for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
    auto f = split_tabs(lines[i]);
    if (f.size() != 4 || f[0] != "host") return "line " + std::to_string(i + 1) + ": not a host line";
    MonitoredHost h{std::string(f[1]), std::string(f[2]), std::string(f[3])};
    if (std::string why = invalid_host(h); !why.empty()) {
      return "line " + std::to_string(i + 1) + ": " + why;
    }
    if (r.find(h.mon_name) != nullptr) return "line " + std::to_string(i + 1) + ": a second entry for " + h.mon_name;
    r.hosts.push_back(std::move(h));
  }
  return {};
}

}  // namespace nsm_record_cpp

bool NsmRecord::add(MonitoredHost h) {
  for (MonitoredHost& e : hosts) {
    if (e.mon_name == h.mon_name) {
      if (e == h) return false;
      e = std::move(h);
      return true;
    }
  }
  hosts.push_back(std::move(h));
  return true;
}

bool NsmRecord::remove(const std::string& mon_name) {
  auto it = std::find_if(hosts.begin(), hosts.end(),
                         [&](const MonitoredHost& h) { return h.mon_name == mon_name; });
  if (it == hosts.end()) return false;
  hosts.erase(it);
  return true;
}

const MonitoredHost* NsmRecord::find(const std::string& mon_name) const {
  for (const MonitoredHost& h : hosts) {
    if (h.mon_name == mon_name) return &h;
  }
  return nullptr;
}

std::string invalid_host(const MonitoredHost& h) {
  using namespace nsm_record_cpp;
  if (std::string why = invalid_field("mon_name", h.mon_name); !why.empty()) return why;
  if (std::string why = invalid_field("address", h.address); !why.empty()) return why;
  return invalid_field("my_name", h.my_name);
}

std::int32_t next_up_state(std::int32_t previous) {
  if (previous <= 0 || previous >= std::numeric_limits<std::int32_t>::max() - 1) return 1;
  return (previous % 2 == 0) ? previous + 1 : previous + 2;
}

std::int32_t down_state(std::int32_t up) {
  if (up <= 0 || up == std::numeric_limits<std::int32_t>::max()) return 2;
  return (up % 2 == 0) ? up + 2 : up + 1;
}

NsmRecordFile::Loaded NsmRecordFile::load() const {
  using namespace nsm_record_cpp;
  Loaded out;
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      out.ok = true;
      return out;
    }
    out.error = errno_text("cannot open", path_);
    return out;
  }
  out.existed = true;
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      out.error = errno_text("cannot read", path_);
      ::close(fd);
      return out;
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxFileBytes) {
      ::close(fd);
      out.error = path_.string() + ": larger than " + std::to_string(kMaxFileBytes) + " bytes";
      return out;
    }
  }
  ::close(fd);
  if (std::string why = decode(text, out.record); !why.empty()) {
    out.record = NsmRecord{};
    out.error = path_.string() + ": " + why;
    return out;
  }
  out.ok = true;
  return out;
}

std::string NsmRecordFile::save(const NsmRecord& r) const {
  using namespace nsm_record_cpp;
  if (r.state < 0) return "negative state " + std::to_string(r.state);
  if (r.hosts.size() > kMaxMonitoredHosts) {
    return std::to_string(r.hosts.size()) + " hosts (at most " + std::to_string(kMaxMonitoredHosts) + ")";
  }
  for (const MonitoredHost& h : r.hosts) {
    if (std::string why = invalid_host(h); !why.empty()) return "host " + h.mon_name.substr(0, 64) + ": " + why;
  }
  const std::string text = encode(r);
  std::filesystem::path tmp = path_;
  tmp += ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errno_text("cannot create", tmp);
  if (!write_all(fd, text)) {
    std::string e = errno_text("cannot write", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  }
  if (::fsync(fd) != 0) {
    std::string e = errno_text("cannot fsync", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    std::string e = errno_text("cannot rename over", path_);
    ::unlink(tmp.c_str());
    return e;
  }
  std::filesystem::path dir = path_.parent_path();
  if (dir.empty()) dir = ".";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno_text("cannot open directory", dir);
  int rc = ::fsync(dfd);
  std::string e = rc != 0 ? errno_text("cannot fsync directory", dir) : std::string();
  ::close(dfd);
  return e;
}

NsmRecordFile::Loaded NsmRecordFile::start_run(std::int32_t at_least) const {
  Loaded out = load();
  std::string dropped;
  if (!out.ok) {
    dropped = out.error + " (dropped: starting with no hosts)";
    out.record = NsmRecord{};
  }
  out.record.state = next_up_state(out.record.state);
  if (at_least > out.record.state) out.record.state = at_least % 2 == 1 ? at_least : next_up_state(at_least);
  if (std::string e = save(out.record); !e.empty()) {
    out.ok = false;
    out.error = dropped.empty() ? e : dropped + "; " + e;
    return out;
  }
  out.ok = true;
  out.error = dropped;
  return out;
}

}  // namespace nfsgw::nlm
