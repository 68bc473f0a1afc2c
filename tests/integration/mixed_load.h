// The mixed load of the crash and origin-fault tests: raw NFSv3 clients, each in
// its own directory of the export, that create, write checksummed chunks
// (FILE_SYNC, and UNSTABLE followed by COMMIT), rename and remove files, and keep
// a model of what the server acknowledged, to check on the origin's disk later.
//
// A client behaves as the Linux client does where it matters here: it retries a
// call answered NFS3ERR_JUKEBOX after a pause (the kernel waits 5 s, this client
// `jukebox_pause`), and writes again the UNSTABLE writes whose verifier a COMMIT
// does not confirm. A non-idempotent call retried after JUKEBOX may find its first
// attempt executed (the origin did it, the reply was lost with the connection):
// CREATE then answers EXIST, REMOVE and RENAME NOENT. The client accepts those
// outcomes only after a JUKEBOX and only when the origin's disk shows the call
// done, and counts them (`retried_already_done`); any other error is a failure.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tests/support/raw_nfs.h"

namespace integ {

constexpr std::uint32_t kLoadChunk = 24 * 1024;  // bytes per WRITE
constexpr unsigned kLoadChunksPerFile = 8;
constexpr std::uint32_t kNfs3ErrExist = 17;
constexpr std::uint32_t kNfs3ErrJukebox = 10008;

/// The bytes of chunk `index` of a client's file `file`: pseudo-random, so that a
/// chunk written at the wrong place or with another's bytes never compares equal.
std::string chunk_bytes(unsigned client, unsigned file, unsigned index, unsigned version);
std::string read_whole(const std::string& path);
bool exists(const std::string& path);

/// Counts across clients and rounds.
struct LoadTotals {
  std::atomic<std::uint64_t> calls{0}, acked_writes{0}, commits{0}, lost_replies{0}, creates{0}, renames{0},
      removes{0}, verifier_resends{0}, jukebox_retries{0}, retried_already_done{0}, bytes_verified{0},
      reads_through{0};
  std::mutex verf_mu;
  std::set<std::uint64_t> verifiers;  // every write verifier a WRITE or COMMIT answered
  void saw_verifier(std::uint64_t v) {
    std::lock_guard lock(verf_mu);
    if (verifiers.size() < 64) verifiers.insert(v);
  }
  std::size_t distinct_verifiers() {
    std::lock_guard lock(verf_mu);
    return verifiers.size();
  }
};

struct LoadOptions {
  /// A transport failure (no reply) is a failure, not a reply the kill took: the
  /// server stays up, only its origin goes away.
  bool transport_failure_is_error = false;
  /// Each call waits at most this long for its reply.
  int timeout_ms = 10000;
  std::chrono::milliseconds jukebox_pause{1000};
  /// JUKEBOX retries of one call, at most (then it is a failure).
  unsigned max_jukebox_retries = 200;
  /// Only UNSTABLE writes (batches of 4-6) with COMMIT (and READs, which fill the data
  /// cache): no FILE_SYNC, create beyond the first files, rename or remove.
  bool unstable_only = false;
  /// A pause between a batch's UNSTABLE writes and its COMMIT (the Linux client
  /// commits later too): a fault then most likely falls inside a batch.
  std::chrono::milliseconds commit_delay{0};
};

/// What one client knows of one of its files.
struct FileModel {
  unsigned id = 0;
  Handle handle;
  std::string name;                    // its name, when known for sure
  std::vector<std::string> maybe;      // the names it may have (a RENAME's reply was lost)
  std::map<unsigned, unsigned> acked;  // chunk index -> version acknowledged
  std::map<unsigned, bool> unsure;     // chunks written since, not acknowledged (yet)
  unsigned next_version = 1;
};

/// One client: its own directory on the origin, its files, and a connection it
/// opens again after every transport failure.
class LoadClient {
 public:
  LoadClient(unsigned id, LoadTotals& totals, std::string origin_export_dir, LoadOptions options = {});

  const std::string& failures() const { return failures_; }
  std::string dir_path() const { return origin_dir_ + "/client" + std::to_string(id_); }

  /// MNT and LOOKUP of its directory (created on the origin by the test); handles
  /// are kept across rounds and restarts.
  bool prepare(std::uint16_t port);
  /// Runs calls until `stop`, a transport failure or `max_calls`. Returns the
  /// number of calls made.
  unsigned run(std::uint16_t port, const std::atomic<bool>& stop, unsigned max_calls);
  /// After a restart: every held handle answers GETATTR without STALE, and every
  /// acknowledged chunk is in the origin's file.
  void verify(std::uint16_t port);
  /// READ of every held file through the server, compared with the origin's disk.
  void verify_reads(std::uint16_t port);
  void drop_connection();

  /// When the last call of this client completed (steady clock), for recovery times.
  std::chrono::steady_clock::time_point last_completion() const { return last_done_.load(); }
  /// Byte ranges [offset, offset + kLoadChunk) of files that hold writes not
  /// acknowledged by a COMMIT (or FILE_SYNC) yet, as origin paths and offsets: what
  /// an origin that restarts may lose. Safe while run() is on another thread.
  std::vector<std::pair<std::string, std::uint64_t>> uncommitted_chunks() const;

 private:
  bool fail(const std::string& why);
  bool connect(std::uint16_t port);
  bool lost(const RawStatus& r);
  void check_status(const RawStatus& r, const std::string& what);
  /// Calls `f` again while it answers JUKEBOX, after a pause; `retried` tells
  /// whether it did.
  template <typename F>
  auto with_retries(F f, bool* retried);
  void done();

  void step();
  void create();
  void write_stable(FileModel& f);
  void write_unstable(FileModel& f);
  void read_back(FileModel& f);
  void rename(FileModel& f);
  void remove(std::map<unsigned, FileModel>::iterator it);
  void check_on_origin(const FileModel& f);
  std::string path_of(const FileModel& f) const;

  unsigned id_;
  LoadTotals& totals_;
  std::string origin_dir_;
  LoadOptions options_;
  std::mt19937 rng_;
  std::unique_ptr<RawNfsConnection> conn_;
  Handle root_, dir_;
  mutable std::mutex model_mu_;  // files_ for uncommitted_chunks(); the rest is the run thread's
  std::map<unsigned, FileModel> files_;
  std::vector<std::string> removed_;
  std::string failures_;
  unsigned next_file_ = 0;
  std::atomic<std::chrono::steady_clock::time_point> last_done_{};
};

}  // namespace integ
