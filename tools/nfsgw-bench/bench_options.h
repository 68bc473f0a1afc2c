#pragma once
// Command-line options of nfsgw-bench and their parser.
//
// Kept apart from main() so the parser can be unit tested: every limit that
// keeps a run bounded (duration cap, connection and in-flight caps) is enforced
// here, before any socket is opened.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nfsgw::bench {

enum class Mode { Null, Getattr, Lookup, LookupMissing, Access, Read, Write, Php, Walk, Churn, SeqWrite, Unpack, Locks };

const char* mode_name(Mode m);
std::optional<Mode> mode_from_name(const std::string& name);

struct Options {
  std::string url;                  ///< nfs://host/export?nfsport=N&mountport=M
  Mode mode = Mode::Getattr;
  unsigned connections = 4;
  unsigned inflight = 16;           ///< outstanding calls (or requests) per connection
  unsigned threads = 1;             ///< connections are spread over this many poll loops
  double duration_s = 10.0;         ///< always applies; capped at kMaxDurationS
  std::uint64_t count = 0;          ///< stop after this many calls (0 = no count limit)
  unsigned files = 2000;
  std::uint32_t size = 4096;        ///< file size for --setup and unpack, I/O size for read/write/seqwrite
  std::uint64_t file_size = 64ull << 20;  ///< seqwrite: bytes of each connection's file
  bool setattr_times = true;        ///< unpack: the SETATTR sets atime and mtime too (--setattr)
  std::string dir = "nfsgw-bench";  ///< working folder under the export root
  bool setup = false;
  std::string prepare_local;        ///< write the working set here and exit
  bool json = false;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  double timeout_s = 10.0;          ///< connect / drain timeout
  bool file_sync = false;           ///< write, seqwrite, unpack: FILE_SYNC instead of UNSTABLE
  std::uint64_t seed = 1;
  bool sequential = false;          ///< --order sequential: files in order (file_picker.h)
  std::uint16_t nlm_port = 0;       ///< locks: the server's NLM v4 port (0: ask its rpcbind)
  bool help = false;
};

inline constexpr double kMaxDurationS = 600.0;
inline constexpr unsigned kMaxConnections = 256;
inline constexpr unsigned kMaxInflight = 4096;
inline constexpr unsigned kMaxThreads = 64;
inline constexpr unsigned kMaxFiles = 1000000;
inline constexpr std::uint32_t kMaxSize = 1u << 20;
inline constexpr std::uint64_t kMaxFileSize = 1ull << 40;

/// Parses argv (without argv[0]). Throws std::invalid_argument with a message
/// naming the bad option.
Options parse_options(const std::vector<std::string>& args);

std::string usage_text();

}  // namespace nfsgw::bench
