#include "tools/nfsgw-bench/bench_options.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace nfsgw::bench {
namespace {

struct ModeName {
  Mode mode;
  const char* name;
};
constexpr ModeName kModes[] = {
    {Mode::Null, "null"},     {Mode::Getattr, "getattr"},
    {Mode::Lookup, "lookup"}, {Mode::LookupMissing, "lookup-missing"},
    {Mode::Access, "access"}, {Mode::Read, "read"},
    {Mode::Write, "write"},   {Mode::Php, "php"},
    {Mode::Walk, "walk"},     {Mode::Churn, "churn"},
    {Mode::SeqWrite, "seqwrite"}, {Mode::Unpack, "unpack"}, {Mode::Locks, "locks"},
};

std::uint64_t parse_uint(const std::string& opt, const std::string& text, std::uint64_t lo,
                         std::uint64_t hi) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument(opt + ": not a number: '" + text + "'");
  if (v < lo || v > hi)
    throw std::invalid_argument(opt + ": " + text + " is outside [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
  return v;
}

double parse_seconds(const std::string& opt, const std::string& text, double lo, double hi) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || !std::isfinite(v))
    throw std::invalid_argument(opt + ": not a number: '" + text + "'");
  if (v < lo || v > hi)
    throw std::invalid_argument(opt + ": " + text + " is outside [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "] seconds");
  return v;
}

}  // namespace

const char* mode_name(Mode m) {
  for (const auto& e : kModes)
    if (e.mode == m) return e.name;
  return "?";
}

std::optional<Mode> mode_from_name(const std::string& name) {
  for (const auto& e : kModes)
    if (name == e.name) return e.mode;
  return std::nullopt;
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string opt = args[i];
    std::optional<std::string> inline_value;
    if (auto eq = opt.find('='); opt.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = opt.substr(eq + 1);
      opt.resize(eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= args.size()) throw std::invalid_argument(opt + ": needs a value");
      return args[++i];
    };
    auto flag = [&]() {
      if (inline_value) throw std::invalid_argument(opt + ": takes no value");
    };
    if (opt == "--url") {
      o.url = value();
    } else if (opt == "--mode") {
      std::string m = value();
      auto mode = mode_from_name(m);
      if (!mode) throw std::invalid_argument("--mode: unknown mode '" + m + "'");
      o.mode = *mode;
    } else if (opt == "--connections") {
      o.connections = static_cast<unsigned>(parse_uint(opt, value(), 1, kMaxConnections));
    } else if (opt == "--inflight") {
      o.inflight = static_cast<unsigned>(parse_uint(opt, value(), 1, kMaxInflight));
    } else if (opt == "--threads") {
      o.threads = static_cast<unsigned>(parse_uint(opt, value(), 1, kMaxThreads));
    } else if (opt == "--duration") {
      o.duration_s = parse_seconds(opt, value(), 0.01, kMaxDurationS);
    } else if (opt == "--count") {
      o.count = parse_uint(opt, value(), 1, ~std::uint64_t{0});
    } else if (opt == "--files") {
      o.files = static_cast<unsigned>(parse_uint(opt, value(), 1, kMaxFiles));
    } else if (opt == "--size") {
      o.size = static_cast<std::uint32_t>(parse_uint(opt, value(), 0, kMaxSize));
    } else if (opt == "--file-size") {
      o.file_size = parse_uint(opt, value(), 1, kMaxFileSize);
    } else if (opt == "--setattr") {
      std::string v = value();
      if (v != "mode" && v != "times")
        throw std::invalid_argument("--setattr: '" + v + "' is neither mode nor times");
      o.setattr_times = v == "times";
    } else if (opt == "--dir") {
      o.dir = value();
      if (o.dir.empty() || o.dir.find('/') != std::string::npos || o.dir == "." || o.dir == "..")
        throw std::invalid_argument("--dir: must be one plain name under the export root");
    } else if (opt == "--setup") {
      flag();
      o.setup = true;
    } else if (opt == "--prepare-local") {
      o.prepare_local = value();
      if (o.prepare_local.empty()) throw std::invalid_argument("--prepare-local: empty path");
    } else if (opt == "--json") {
      flag();
      o.json = true;
    } else if (opt == "--uid") {
      o.uid = static_cast<std::uint32_t>(parse_uint(opt, value(), 0, 0xffffffffu));
    } else if (opt == "--gid") {
      o.gid = static_cast<std::uint32_t>(parse_uint(opt, value(), 0, 0xffffffffu));
    } else if (opt == "--timeout") {
      o.timeout_s = parse_seconds(opt, value(), 0.1, 300.0);
    } else if (opt == "--file-sync") {
      flag();
      o.file_sync = true;
    } else if (opt == "--order") {
      std::string v = value();
      if (v != "random" && v != "sequential")
        throw std::invalid_argument("--order: '" + v + "' is neither random nor sequential");
      o.sequential = v == "sequential";
    } else if (opt == "--nlm-port") {
      o.nlm_port = static_cast<std::uint16_t>(parse_uint(opt, value(), 1, 65535));
    } else if (opt == "--seed") {
      o.seed = parse_uint(opt, value(), 0, ~std::uint64_t{0});
    } else if (opt == "--help" || opt == "-h") {
      o.help = true;
    } else {
      throw std::invalid_argument("unknown option '" + args[i] + "'");
    }
  }
  if (!o.help && o.prepare_local.empty() && o.url.empty())
    throw std::invalid_argument("--url is required (or --prepare-local DIR)");
  if ((o.mode == Mode::SeqWrite || o.mode == Mode::Unpack) && o.size == 0)
    throw std::invalid_argument(std::string("--size: ") + mode_name(o.mode) + " needs at least 1 byte");
  if (o.threads > o.connections) o.threads = o.connections;
  return o;
}

std::string usage_text() {
  return R"(nfsgw-bench: NFSv3 load generator (libnfs raw async API)

  nfsgw-bench --url 'nfs://HOST/EXPORT?nfsport=N&mountport=M' --mode MODE [options]
  nfsgw-bench --prepare-local DIR [--files N] [--size B] [--dir NAME]

Modes: null getattr lookup lookup-missing access read write php walk churn seqwrite unpack locks
  php   per request: LOOKUP, GETATTR, ACCESS, READ of a small file
  churn per request: CREATE of a name no earlier request used (cr<pid>-<thread>-<n>)
        in the working folder, then REMOVE of it; both count as calls
  walk  READDIRPLUS of the whole working folder, then GETATTR of every entry,
        descending into every subfolder (with --connections 1 --inflight 1: one
        call at a time, like ls -lR)
  seqwrite  each connection writes one file w<N> (N: the connection's number) of
        --file-size bytes like cp onto a kernel mount: CREATE, then UNSTABLE
        WRITEs of --size bytes in offset order, --inflight of them in flight,
        then COMMIT once all are answered. The run is over when the last COMMIT
        has answered; seconds include the CREATE. A short WRITE is sent again
        for its rest; a verifier that changes between WRITE and COMMIT fails the
        run. Prints bytes written, files and seconds
  unpack  per request, one file u<N> of --files, like tar -x: CREATE, one UNSTABLE
        WRITE of --size bytes, COMMIT, SETATTR (mode 0644 and, with --setattr
        times, atime and mtime). --inflight files at once per connection
  seqwrite and unpack create --dir (MKDIR) when it does not exist, and fail the
  run on any non-OK answer
  locks   per request, an NLM v4 LOCK (exclusive, non-blocking) of one byte of a
        file of the working set, then its UNLOCK, each request as an owner of its
        own (caller name 127.0.0.1, svid and byte counting up), over connections
        to the server's NLM (--nlm-port, or its rpcbind); both count as calls, an
        answer other than GRANTED as an error. A lock/unlock pair per request

Options:
  --connections N   TCP connections (default 4)
  --inflight N      calls (php: requests; seqwrite: WRITEs of the connection's file;
                    unpack: files) in flight per connection (default 16)
  --threads N       poll loops the connections are spread over (default 1)
  --duration S      run time in seconds, always applies (default 10, max 600);
                    seqwrite and unpack start no file after it, and a file still
                    being written then has --timeout more to finish
  --count N         stop after N calls
  --files N         files in the working set (default 2000; unpack: files it writes)
  --size B          file size for --setup and unpack, I/O size for read/write/seqwrite
                    (default 4096, max 1048576)
  --file-size B     seqwrite: bytes per file (default 67108864)
  --setattr WHAT    unpack: times (default: mode, atime and mtime, as tar -x) or mode
  --dir NAME        working folder under the export root (default nfsgw-bench)
  --setup           create the working set through NFS before the run
  --prepare-local D write the working set into local folder D (for an origin export) and exit
  --uid N --gid N   AUTH_SYS credentials (default 0/0)
  --timeout S       connect and drain timeout (default 10)
  --file-sync       write, seqwrite, unpack: FILE_SYNC writes instead of UNSTABLE
  --nlm-port N      locks: the server's NLM port (default: ask its rpcbind)
  --seed N          seed for the file choice
  --order O         random (default) or sequential: file 0, 1, 2, ... (read: each
                    pass over the files reads the next --size bytes of each), so
                    --order sequential --count N --connections 1 --inflight 1 makes
                    N calls on N distinct files, one after the other
  --json            also print one JSON object
Without nfsport/mountport in the URL the ports are asked from rpcbind.
)";
}

}  // namespace nfsgw::bench
