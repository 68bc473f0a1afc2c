// Crashes and faults under load: nothing a client was told is written is lost.
//
//   - KillNineUnderMixedLoad: several raw clients create, write (FILE_SYNC, and
//     UNSTABLE followed by COMMIT), rename and remove checksummed files through
//     nfsgw while it is killed with SIGKILL, round after round. After every restart
//     nfsgw's database opens and it answers; every write a client saw acknowledged
//     (a FILE_SYNC reply, or the COMMIT after unstable writes, with the verifier the
//     writes had) is in the origin's files, byte for byte, read straight from the
//     ganesha export directory; every handle a client holds still works (no
//     NFS3ERR_STALE) through the restarted nfsgw. A call whose reply the kill took
//     is not counted as acknowledged: its bytes are not checked.
//     Rounds: $NFSGW_CRASH_ROUNDS (default 20, the figure: about 1 s a round;
//     figures in docs/benchmarks.md).
//   - SigtermUnderLoad: SIGTERM while clients have calls in flight (pipelined
//     GETATTRs and writes): nfsgw exits with 0, says every call in flight finished
//     or failed (nothing left queued on its io_context), RocksDB logged its
//     "Shutdown complete" (the database was closed), every client call ends
//     (answered or cut), and the next start serves what was acknowledged.
//     scripts/test.sh runs this suite with an ASan build of nfsgw too, where a use
//     after free in the shutdown path makes nfsgw exit with an error.
//   - CacheDiskFull: the cache directory on a small tmpfs of its own, filled up:
//     calls still succeed (forwarded), the log says so once, and when space returns
//     nfsgw says so and keeps its records on disk again.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kChunk = 24 * 1024;  // bytes per WRITE
constexpr unsigned kChunksPerFile = 8;
constexpr std::uint32_t kNfs3ErrJukebox = 10008;

struct Setup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<Gateway> gateway;
  std::string skip_reason;
};

Setup& setup() {
  static Setup s;
  return s;
}

GatewayConfig gateway_config() {
  GatewayConfig cfg;
  cfg.port = kCrashGatewayPort;
  cfg.origin_url = setup().origin->url();
  cfg.threads = 2;
  return cfg;  // metadata and data caches on (nfsgw's defaults)
}

class CrashEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto& s = setup();
    if (!nfsgw_binary()) {
      s.skip_reason = "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";
      return;
    }
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kCrashOriginNfsPort, kCrashOriginMountPort);
      s.origin->start();
      s.dir = std::make_unique<TempDir>("crash");
      s.gateway = std::make_unique<Gateway>(gateway_config(), s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      s.skip_reason = std::string("set-up failed: ") + e.what();
    }
  }
  void TearDown() override {
    auto& s = setup();
    s.gateway.reset();
    s.dir.reset();
    s.origin.reset();
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new CrashEnvironment);

#define REQUIRE_SETUP()                                                    \
  do {                                                                     \
    if (!setup().skip_reason.empty()) GTEST_FAIL() << setup().skip_reason; \
  } while (0)

Gateway& gw() { return *setup().gateway; }
const std::string& origin_dir() { return setup().origin->export_dir(); }

/// The bytes of chunk `index` of a client's file `file`: pseudo-random, so that a
/// chunk written at the wrong place or with another's bytes never compares equal.
std::string chunk_bytes(unsigned client, unsigned file, unsigned index, unsigned version) {
  std::mt19937_64 rng((std::uint64_t{client} << 48) ^ (std::uint64_t{file} << 24) ^ (index << 8) ^ version);
  std::string s(kChunk, '\0');
  for (std::size_t i = 0; i < s.size(); i += 8) {
    const auto v = rng();
    for (std::size_t j = 0; j < 8 && i + j < s.size(); ++j) s[i + j] = static_cast<char>(v >> (8 * j));
  }
  return s;
}

std::string read_whole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// What one client knows of one of its files.
struct FileModel {
  unsigned id = 0;
  Handle handle;
  std::string name;                  // its name, when known for sure
  std::vector<std::string> maybe;    // the names it may have (a RENAME's reply was lost)
  std::map<unsigned, unsigned> acked;  // chunk index -> version acknowledged
  std::map<unsigned, bool> unsure;     // chunks written since, with no answer
  unsigned next_version = 1;
};

/// Counts across rounds.
struct Totals {
  std::atomic<std::uint64_t> calls{0}, acked_writes{0}, commits{0}, lost_replies{0}, creates{0}, renames{0},
      removes{0}, verifier_resends{0};
};

/// One client: its own directory on the origin, its files, and a connection it
/// opens again after every transport failure.
class Client {
 public:
  Client(unsigned id, Totals& totals) : id_(id), totals_(totals), rng_(1000 + id) {}

  const std::string& failures() const { return failures_; }
  std::string dir_path() const { return origin_dir() + "/client" + std::to_string(id_); }

  /// MNT and LOOKUP of its directory (created on the origin by the test); handles
  /// are kept across rounds and restarts.
  bool prepare(std::uint16_t port) {
    make_dirs(dir_path());
    auto m = mount_root(port, "/export");
    if (!m.transport_ok || m.status != kNfs3Ok) return fail("MNT: " + m.error);
    root_ = m.root;
    if (!connect(port)) return false;
    auto d = conn_->lookup(root_, "client" + std::to_string(id_));
    if (!d.transport_ok || d.status != kNfs3Ok) return fail("LOOKUP of the client's directory: " + d.error);
    dir_ = d.handle;
    return true;
  }

  /// Runs calls until `stop`, a transport failure or `max_calls`. Returns the
  /// number of calls made.
  unsigned run(std::uint16_t port, const std::atomic<bool>& stop, unsigned max_calls) {
    if (!conn_ && !connect(port)) return 0;
    unsigned n = 0;
    while (!stop && n < max_calls && conn_) {
      ++n;
      step();
    }
    return n;
  }

  /// After a restart: every held handle answers GETATTR without STALE, and every
  /// acknowledged chunk is in the origin's file.
  void verify(std::uint16_t port) {
    if (!connect(port)) return;
    for (auto& [id, f] : files_) {
      auto a = conn_->getattr(f.handle);
      if (!a.transport_ok) {
        fail("GETATTR after the restart failed on the transport: " + a.error);
        return;
      }
      if (a.status != kNfs3Ok)
        fail("GETATTR of held handle of file " + std::to_string(id) + " answered " + std::to_string(a.status));
      check_on_origin(f);
    }
    if (!conn_->getattr(dir_).transport_ok) fail("GETATTR of the directory handle failed");
    for (const auto& name : removed_)
      if (exists(dir_path() + "/" + name)) fail("removed file " + name + " is back on the origin");
  }

  void drop_connection() { conn_.reset(); }

 private:
  bool fail(const std::string& why) {
    if (failures_.size() < 4000) failures_ += "client " + std::to_string(id_) + ": " + why + "\n";
    return false;
  }

  bool connect(std::uint16_t port) {
    conn_ = std::make_unique<RawNfsConnection>();
    conn_->timeout_ms = 10000;
    if (!conn_->connect(port, kNfsProgram, 3)) {
      conn_.reset();
      return false;
    }
    return true;
  }

  /// A transport failure: the reply is lost (the kill); the connection goes.
  bool lost(const RawStatus& r) {
    if (r.transport_ok) return false;
    ++totals_.lost_replies;
    conn_.reset();
    return true;
  }

  void check_status(const RawStatus& r, const std::string& what) {
    if (r.status == kNfs3ErrStale) fail(what + ": NFS3ERR_STALE on a held handle");
    else if (r.status != kNfs3Ok) fail(what + ": status " + std::to_string(r.status));
  }

  void step() {
    ++totals_.calls;
    const unsigned dice = rng_() % 100;
    if (files_.size() < 3 || dice < 10) return create();
    auto it = files_.begin();
    std::advance(it, rng_() % files_.size());
    FileModel& f = it->second;
    if (dice < 45) return write_stable(f);
    if (dice < 80) return write_unstable(f);
    if (dice < 92 && f.maybe.empty()) return rename(f);
    if (files_.size() > 6) return remove(it);
    return write_stable(f);
  }

  void create() {
    const unsigned id = next_file_++;
    const std::string name = "f" + std::to_string(id);
    auto c = conn_->create(dir_, name);
    if (lost(c)) return;  // perhaps created: never used again, never checked
    ++totals_.creates;
    if (c.status != kNfs3Ok || c.handle.empty()) return (void)fail("CREATE " + name + ": status " + std::to_string(c.status));
    FileModel f;
    f.id = id;
    f.handle = c.handle;
    f.name = name;
    files_.emplace(id, std::move(f));
  }

  void write_stable(FileModel& f) {
    const unsigned index = rng_() % kChunksPerFile, version = f.next_version++;
    f.unsure[index] = true;
    auto w = conn_->write(f.handle, std::uint64_t{index} * kChunk, chunk_bytes(id_, f.id, index, version), kFileSync);
    if (lost(w)) return;
    check_status(w, "WRITE FILE_SYNC");
    if (w.status != kNfs3Ok) return;
    if (w.count != kChunk || w.committed != kFileSync) {
      fail("WRITE FILE_SYNC answered count " + std::to_string(w.count) + " committed " + std::to_string(w.committed));
      return;
    }
    f.unsure.erase(index);
    f.acked[index] = version;
    ++totals_.acked_writes;
  }

  /// Two or three UNSTABLE writes, then COMMIT: acknowledged when the COMMIT's
  /// verifier is the writes' (else, as a client must, written again, a bounded
  /// number of times).
  void write_unstable(FileModel& f) {
    const unsigned n = 2 + rng_() % 2;
    std::map<unsigned, unsigned> batch;
    for (unsigned i = 0; i < n; ++i) {
      const unsigned index = rng_() % kChunksPerFile;
      batch[index] = f.next_version++;
      f.unsure[index] = true;
    }
    for (int attempt = 0; attempt < 3; ++attempt) {
      std::optional<std::uint64_t> verf;
      bool same_verf = true;
      for (const auto& [index, version] : batch) {
        auto w = conn_->write(f.handle, std::uint64_t{index} * kChunk, chunk_bytes(id_, f.id, index, version), kUnstable);
        if (lost(w)) return;
        check_status(w, "WRITE UNSTABLE");
        if (w.status != kNfs3Ok) return;
        if (w.count != kChunk) return (void)fail("WRITE UNSTABLE short: " + std::to_string(w.count));
        if (verf && *verf != w.verf) same_verf = false;
        verf = w.verf;
      }
      auto c = conn_->commit(f.handle);
      if (lost(c)) return;
      check_status(c, "COMMIT");
      if (c.status != kNfs3Ok) return;
      if (same_verf && c.verf == *verf) {
        for (const auto& [index, version] : batch) {
          f.unsure.erase(index);
          f.acked[index] = version;
        }
        totals_.acked_writes += batch.size();
        ++totals_.commits;
        return;
      }
      ++totals_.verifier_resends;  // the server may have lost them: write them again
    }
    fail("COMMIT verifier never matched the writes' in 3 attempts");
  }

  void rename(FileModel& f) {
    const std::string to = "f" + std::to_string(f.id) + ".r" + std::to_string(rng_() % 1000);
    if (to == f.name) return;
    auto r = conn_->rename(dir_, f.name, dir_, to);
    if (lost(r)) {
      f.maybe = {f.name, to};  // either; not renamed again
      return;
    }
    ++totals_.renames;
    check_status(r, "RENAME " + f.name + " -> " + to);
    if (r.status == kNfs3Ok) f.name = to;
  }

  void remove(std::map<unsigned, FileModel>::iterator it) {
    FileModel& f = it->second;
    if (!f.maybe.empty()) return;
    auto r = conn_->remove(dir_, f.name);
    if (lost(r)) {
      files_.erase(it);  // perhaps removed: no longer checked
      return;
    }
    ++totals_.removes;
    check_status(r, "REMOVE " + f.name);
    if (r.status == kNfs3Ok) removed_.push_back(f.name);
    files_.erase(it);
  }

  void check_on_origin(const FileModel& f) {
    std::string bytes, found_as;
    std::vector<std::string> names = f.maybe.empty() ? std::vector<std::string>{f.name} : f.maybe;
    for (const auto& n : names) {
      if (exists(dir_path() + "/" + n)) {
        bytes = read_whole(dir_path() + "/" + n);
        found_as = n;
        break;
      }
    }
    if (found_as.empty()) {
      fail("file " + std::to_string(f.id) + " (" + names.front() + ") is not on the origin");
      return;
    }
    for (const auto& [index, version] : f.acked) {
      if (f.unsure.count(index)) continue;  // written again since, answer lost
      const std::size_t off = std::size_t{index} * kChunk;
      if (bytes.size() < off + kChunk || bytes.compare(off, kChunk, chunk_bytes(id_, f.id, index, version)) != 0)
        fail("file " + found_as + ": acknowledged chunk " + std::to_string(index) + " (version " +
             std::to_string(version) + ") is not on the origin");
    }
  }

  unsigned id_;
  Totals& totals_;
  std::mt19937 rng_;
  std::unique_ptr<RawNfsConnection> conn_;
  Handle root_, dir_;
  std::map<unsigned, FileModel> files_;
  std::vector<std::string> removed_;
  std::string failures_;
  unsigned next_file_ = 0;
};

unsigned env_unsigned(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return static_cast<unsigned>(std::strtoul(v, nullptr, 10));
}

TEST(Crash, KillNineUnderMixedLoadLosesNothingAcknowledged) {
  REQUIRE_SETUP();
  const unsigned rounds = env_unsigned("NFSGW_CRASH_ROUNDS", 20);
  constexpr unsigned kClients = 4;
  Totals totals;
  std::vector<std::unique_ptr<Client>> clients;
  for (unsigned i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<Client>(i, totals));
    ASSERT_TRUE(clients.back()->prepare(gw().port())) << clients.back()->failures();
  }
  std::mt19937 rng(7);
  std::vector<double> restart_ms;
  std::uint64_t killed_mid_call = 0;
  const auto test_deadline = Clock::now() + std::chrono::minutes(10);
  for (unsigned round = 0; round < rounds && Clock::now() < test_deadline; ++round) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> load;
    const auto lost_before = totals.lost_replies.load();
    for (auto& c : clients)
      load.emplace_back([&, c = c.get()] { c->run(gw().port(), stop, 5000); });
    std::this_thread::sleep_for(milliseconds(300 + rng() % 700));
    const int code = gw().kill9();
    EXPECT_EQ(code, 128 + SIGKILL) << "round " << round;
    stop = true;
    for (auto& t : load) t.join();
    killed_mid_call += totals.lost_replies.load() - lost_before;

    const auto t0 = Clock::now();
    ASSERT_NO_THROW(gw().start()) << "round " << round << ": nfsgw did not come back (its database?)";
    auto m = mount_root(gw().port(), "/export");
    restart_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    ASSERT_TRUE(m.transport_ok && m.status == kNfs3Ok) << "round " << round << ": " << m.error << "\n" << gw().log();
    for (auto& c : clients) c->verify(gw().port());
    for (auto& c : clients) ASSERT_EQ(c->failures(), "") << "after round " << round << "\n" << gw().log();
  }
  // The positive controls: the load did acknowledge writes, and kills did cut calls.
  EXPECT_GT(totals.acked_writes.load(), 50u);
  EXPECT_GT(totals.commits.load(), 5u);
  EXPECT_GT(totals.renames.load(), 0u);
  EXPECT_GT(totals.removes.load(), 0u);
  std::sort(restart_ms.begin(), restart_ms.end());
  const double median = restart_ms.empty() ? 0 : restart_ms[restart_ms.size() / 2];
  std::cout << "[crash] " << restart_ms.size() << " kill -9 rounds, " << totals.calls << " calls, "
            << totals.acked_writes << " writes acknowledged (" << totals.commits << " COMMITs), " << totals.creates
            << " creates, " << totals.renames << " renames, " << totals.removes << " removes, " << killed_mid_call
            << " calls cut (transport failures), " << totals.verifier_resends << " verifier resends; restart to first MNT: median "
            << median << " ms, max " << (restart_ms.empty() ? 0 : restart_ms.back()) << " ms\n";
  EXPECT_EQ(gw().log().find("disk failed"), std::string::npos) << gw().log();
}

TEST(Crash, SigtermWithCallsInFlightExitsCleanly) {
  REQUIRE_SETUP();
  Totals totals;
  constexpr unsigned kWriters = 3, kPipelines = 3;
  std::vector<std::unique_ptr<Client>> writers;
  for (unsigned i = 0; i < kWriters; ++i) {
    writers.push_back(std::make_unique<Client>(100 + i, totals));
    ASSERT_TRUE(writers.back()->prepare(gw().port())) << writers.back()->failures();
  }
  auto m = mount_root(gw().port(), "/export");
  ASSERT_TRUE(m.transport_ok && m.status == kNfs3Ok) << m.error;
  const std::vector<Handle> batch(256, m.root);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> pipelined_ok{0}, pipelined_cut{0}, pipelined_bad{0};
  std::vector<std::thread> load;
  for (auto& c : writers) load.emplace_back([&, c = c.get()] { c->run(gw().port(), stop, 100000); });
  for (unsigned i = 0; i < kPipelines; ++i) {
    load.emplace_back([&] {
      RawNfsConnection conn;
      conn.timeout_ms = 10000;
      if (!conn.connect(gw().port(), kNfsProgram, 3)) return;
      for (int n = 0; n < 10000 && !stop; ++n) {
        bool cut = false;
        for (const auto& r : conn.getattr_pipelined(batch, 128)) {
          if (!r.transport_ok) cut = true, ++pipelined_cut;
          else if (r.status == kNfs3Ok) ++pipelined_ok;
          else ++pipelined_bad;
        }
        if (cut) return;
      }
    });
  }
  // Under way: calls answered on every connection.
  const auto give_up = Clock::now() + seconds(20);
  while ((pipelined_ok < 2000 || totals.acked_writes < 20) && Clock::now() < give_up)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_GE(pipelined_ok.load(), 2000u);
  const auto log_before = gw().log().size();
  const auto t0 = Clock::now();
  const int code = gw().stop();  // SIGTERM; SIGKILL only after 15 s
  const double stop_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  stop = true;
  for (auto& t : load) t.join();
  const std::string log = gw().log().substr(log_before);
  EXPECT_EQ(code, 0) << "nfsgw did not exit cleanly on SIGTERM under load (" << stop_ms << " ms):\n" << log;
  // It ran what the stop left queued until the io_context had no work at all.
  EXPECT_NE(log.find("nfsgw stopped: every call in flight finished or failed"), std::string::npos) << log;
  EXPECT_EQ(log.find("AddressSanitizer"), std::string::npos) << log;
  EXPECT_EQ(pipelined_bad.load(), 0u);
  // The database was closed, not just left behind by the exit.
  const std::string db_log = read_whole(gw().cache_dir() + "/db/LOG");
  EXPECT_NE(db_log.find("Shutdown complete"), std::string::npos) << db_log.substr(db_log.size() > 3000 ? db_log.size() - 3000 : 0);
  std::cout << "[crash] SIGTERM under load: exit " << code << " after " << stop_ms << " ms; " << pipelined_ok
            << " pipelined GETATTRs answered, " << pipelined_cut << " cut; " << totals.acked_writes
            << " writes acknowledged, " << totals.lost_replies << " calls cut\n";

  // The database was closed properly: the next start opens it and serves every
  // acknowledged write, and the handles held.
  ASSERT_NO_THROW(gw().start());
  for (auto& c : writers) {
    c->drop_connection();
    c->verify(gw().port());
    EXPECT_EQ(c->failures(), "");
  }
}

/// A tmpfs of `megabytes` mounted on `dir` for the life of the object.
class SmallDisk {
 public:
  SmallDisk(const std::string& dir, unsigned megabytes) : dir_(dir) {
    make_dirs(dir);
    auto r = run({"mount", "-t", "tmpfs", "-o", "size=" + std::to_string(megabytes) + "m", "tmpfs", dir}, seconds(20));
    mounted_ = r.exit_code == 0;
    error_ = r.output;
  }
  ~SmallDisk() {
    if (mounted_) run({"umount", "-l", dir_}, seconds(20));
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

  /// Writes a file of zeros until the disk says ENOSPC (bounded by the tmpfs size).
  bool fill() {
    std::FILE* f = std::fopen((dir_ + "/filler").c_str(), "wb");
    if (!f) return false;
    const std::string mib(1 << 20, '\0');
    for (int i = 0; i < 4096; ++i)
      if (std::fwrite(mib.data(), 1, mib.size(), f) != mib.size()) break;
    std::fclose(f);  // the last, partial buffer fails here too: the disk is full
    return true;
  }
  void free_space() { std::remove((dir_ + "/filler").c_str()); }

 private:
  std::string dir_, error_;
  bool mounted_ = false;
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

/// LOOKUP, GETATTR and READ of every file of `dir` on the origin through nfsgw,
/// each compared with the origin's bytes. Returns the first problem, or "".
std::string read_all_through(std::uint16_t port, const std::string& dir, unsigned files) {
  auto m = mount_root(port, "/export");
  if (!m.transport_ok || m.status != kNfs3Ok) return "MNT failed: " + m.error;
  RawNfsConnection c;
  c.timeout_ms = 20000;
  if (!c.connect(port, kNfsProgram, 3)) return "connect failed: " + c.error();
  auto d = c.lookup(m.root, dir);
  if (!d.transport_ok || d.status != kNfs3Ok) return "LOOKUP " + dir + ": " + std::to_string(d.status) + d.error;
  for (unsigned i = 0; i < files; ++i) {
    const std::string name = "file" + std::to_string(i);
    auto f = c.lookup(d.handle, name);
    if (!f.transport_ok || f.status != kNfs3Ok) return "LOOKUP " + name + ": " + std::to_string(f.status) + f.error;
    auto a = c.getattr(f.handle);
    if (!a.transport_ok || a.status != kNfs3Ok) return "GETATTR " + name + ": " + std::to_string(a.status) + a.error;
    auto r = c.read(f.handle, 0, 65536);
    if (!r.transport_ok || r.status != kNfs3Ok) return "READ " + name + ": " + std::to_string(r.status) + r.error;
    if (std::string(r.data.begin(), r.data.end()) != read_whole(origin_dir() + "/" + dir + "/" + name))
      return "READ " + name + ": not the origin's bytes";
  }
  return "";
}

constexpr unsigned kBigFiles = 6000;

/// READDIRPLUS of `path` (below the export root) through nfsgw: "" when every call
/// succeeded and saw `entries` (besides "." and "..").
std::string list_through(std::uint16_t port, const std::string& path, unsigned entries) {
  auto m = mount_root(port, "/export");
  if (!m.transport_ok || m.status != kNfs3Ok) return "MNT failed: " + m.error;
  RawNfsConnection c;
  c.timeout_ms = 30000;
  if (!c.connect(port, kNfsProgram, 3)) return "connect failed: " + c.error();
  Handle at = m.root;
  std::istringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    auto d = c.lookup(at, part);
    if (!d.transport_ok || d.status != kNfs3Ok) return "LOOKUP " + part + ": " + std::to_string(d.status) + d.error;
    at = d.handle;
  }
  {
    auto l = c.readdirplus_all(at, 4096, 16384);  // small pages: many listing records
    if (!l.transport_ok || l.status != kNfs3Ok) return "READDIRPLUS: " + std::to_string(l.status) + l.error;
    if (l.entries.size() != entries + 2) return "READDIRPLUS saw " + std::to_string(l.entries.size()) + " entries";
  }
  return "";
}

/// Lines of RocksDB's own logs under `cache_dir` that mention an error.
std::string rocksdb_errors(const std::string& cache_dir) {
  std::string out;
  for (const char* log : {"/db/LOG", "/data/index/LOG"}) {
    std::istringstream lines(read_whole(cache_dir + log));
    for (std::string line; std::getline(lines, line);)
      if (line.find("rror") != std::string::npos && out.size() < 4000) out += std::string(log) + ": " + line + "\n";
  }
  return out;
}

TEST(Crash, FullCacheDiskKeepsServingSaysSoOnceAndRecovers) {
  REQUIRE_SETUP();
  if (::geteuid() != 0) GTEST_FAIL() << "needs root to mount a tmpfs for the cache directory";
  constexpr unsigned kFiles = 300;
  const std::string dir = "smalldisk";
  make_dirs(origin_dir() + "/" + dir + "/big");
  for (unsigned i = 0; i < kBigFiles; ++i)
    write_text_file(origin_dir() + "/" + dir + "/big/a-rather-long-name-for-a-file-" + std::to_string(i), "");
  for (unsigned i = 0; i < kFiles; ++i)
    write_text_file(origin_dir() + "/" + dir + "/file" + std::to_string(i),
                    chunk_bytes(7, i, 0, 1).substr(0, 3000 + i * 37));
  TempDir work("smalldisk");
  SmallDisk disk(work.sub("gw/cache"), 48);
  ASSERT_TRUE(disk.mounted()) << disk.error();
  GatewayConfig cfg = gateway_config();
  cfg.port = kCrashSmallDiskGatewayPort;
  cfg.memory_mb = 16;
  Gateway small(cfg, work.sub("gw"));
  ASSERT_NO_THROW(small.start());
  EXPECT_EQ(read_all_through(small.port(), dir, 20), "");  // the disk works: a positive control

  ASSERT_TRUE(disk.fill());
  // Every call succeeds with the origin's bytes while the cache disk is full; the
  // metadata cache's writes fail and it says so, once. RocksDB preallocates its
  // log (about 2 MiB here): listings of the big directory write past that. Bounded:
  // at most 6 passes (a few suffice; the ASan build is slow).
  const std::string failed = "metadata cache disk failed";
  const auto said = [&] { return count_of(small.log(), failed); };
  int passes = 0;
  for (; passes < 6 && said() == 0; ++passes) {
    const int pass = passes;
    EXPECT_EQ(read_all_through(small.port(), dir, kFiles), "") << "pass " << pass;
    EXPECT_EQ(list_through(small.port(), dir + "/big", kBigFiles), "") << "pass " << pass;
    for (int i = 0; i < 20 && said() == 0; ++i) std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(said(), 1u) << small.log();
  // Degraded, it still answers everything.
  EXPECT_EQ(read_all_through(small.port(), dir, kFiles), "");
  EXPECT_EQ(list_through(small.port(), dir + "/big", kBigFiles), "");
  EXPECT_EQ(said(), 1u);
  auto stats = small.cli("stats");
  EXPECT_NE(stats.output.find("DEGRADED"), std::string::npos) << stats.output;

  // Space returns: within the retry period nfsgw says so and persists again.
  disk.free_space();
  const std::string again = "metadata cache disk works again";
  const auto until2 = Clock::now() + seconds(40);
  while (count_of(small.log(), again) == 0 && Clock::now() < until2) std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(count_of(small.log(), again), 1u) << small.log();
  EXPECT_EQ(read_all_through(small.port(), dir, kFiles), "");
  stats = small.cli("stats");
  EXPECT_EQ(stats.output.find("DEGRADED"), std::string::npos) << stats.output;
  EXPECT_EQ(said(), 1u) << small.log();
  std::cout << "[crash] full cache disk: the metadata store failed after " << passes
            << " pass(es) of reads and listings; log lines about the cache disk:\n";
  std::istringstream lines(small.log());
  for (std::string line; std::getline(lines, line);)
    if (line.find("disk") != std::string::npos || line.find("store error") != std::string::npos)
      std::cout << "  " << line << "\n";
  std::cout << "[crash] RocksDB's logs:\n" << rocksdb_errors(small.cache_dir());
  EXPECT_EQ(small.stop(), 0) << small.log() << rocksdb_errors(small.cache_dir());
}

}  // namespace
