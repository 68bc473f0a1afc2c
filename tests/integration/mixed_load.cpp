#include "tests/integration/mixed_load.h"

#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <utility>

#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace integ {

using Clock = std::chrono::steady_clock;

std::string chunk_bytes(unsigned client, unsigned file, unsigned index, unsigned version) {
  std::mt19937_64 rng((std::uint64_t{client} << 48) ^ (std::uint64_t{file} << 24) ^ (index << 8) ^ version);
  std::string s(kLoadChunk, '\0');
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

LoadClient::LoadClient(unsigned id, LoadTotals& totals, std::string origin_export_dir, LoadOptions options)
    : id_(id), totals_(totals), origin_dir_(std::move(origin_export_dir)), options_(options), rng_(1000 + id) {}

bool LoadClient::fail(const std::string& why) {
  if (failures_.size() < 4000) failures_ += "client " + std::to_string(id_) + ": " + why + "\n";
  return false;
}

bool LoadClient::connect(std::uint16_t port) {
  conn_ = std::make_unique<RawNfsConnection>();
  conn_->timeout_ms = options_.timeout_ms;
  if (!conn_->connect(port, kNfsProgram, 3)) {
    conn_.reset();
    return false;
  }
  return true;
}

void LoadClient::drop_connection() { conn_.reset(); }

bool LoadClient::prepare(std::uint16_t port) {
  make_dirs(dir_path());
  auto m = mount_root(port, "/export");
  if (!m.transport_ok || m.status != kNfs3Ok) return fail("MNT: " + m.error);
  root_ = m.root;
  if (!connect(port)) return fail("connect failed");
  auto d = conn_->lookup(root_, "client" + std::to_string(id_));
  if (!d.transport_ok || d.status != kNfs3Ok) return fail("LOOKUP of the client's directory: " + d.error);
  dir_ = d.handle;
  return true;
}

unsigned LoadClient::run(std::uint16_t port, const std::atomic<bool>& stop, unsigned max_calls) {
  if (!conn_ && !connect(port)) {
    if (options_.transport_failure_is_error) fail("cannot connect");
    return 0;
  }
  unsigned n = 0;
  while (!stop && n < max_calls && conn_) {
    ++n;
    step();
  }
  return n;
}

void LoadClient::done() { last_done_.store(Clock::now()); }

bool LoadClient::lost(const RawStatus& r) {
  if (r.transport_ok) return false;
  ++totals_.lost_replies;
  if (options_.transport_failure_is_error) fail("a call got no reply: " + r.error);
  conn_.reset();
  return true;
}

void LoadClient::check_status(const RawStatus& r, const std::string& what) {
  if (r.status == kNfs3ErrStale) fail(what + ": NFS3ERR_STALE on a held handle");
  else if (r.status != kNfs3Ok) fail(what + ": status " + std::to_string(r.status));
}

template <typename F>
auto LoadClient::with_retries(F f, bool* retried) {
  for (unsigned attempt = 0;; ++attempt) {
    auto r = f();
    if (!r.transport_ok || r.status != kNfs3ErrJukebox || attempt >= options_.max_jukebox_retries) {
      if (r.transport_ok) done();
      return r;
    }
    ++totals_.jukebox_retries;
    if (retried) *retried = true;
    nfsgw::test::pass_time(options_.jukebox_pause, "a client pauses before it retries a JUKEBOX, as NFS clients do");
  }
}

void LoadClient::step() {
  ++totals_.calls;
  const unsigned dice = rng_() % 100;
  if (files_.size() < 3 || (!options_.unstable_only && dice < 10)) return create();
  auto it = files_.begin();
  std::advance(it, rng_() % files_.size());
  FileModel& f = it->second;
  if (options_.unstable_only) {
    if (dice < 10) return read_back(f);
    return write_unstable(f);
  }
  if (dice < 45) return write_stable(f);
  if (dice < 80) return write_unstable(f);
  if (dice < 92 && f.maybe.empty()) return rename(f);
  if (files_.size() > 6) return remove(it);
  return write_stable(f);
}

void LoadClient::create() {
  const unsigned id = next_file_++;
  const std::string name = "f" + std::to_string(id);
  bool retried = false;
  auto c = with_retries([&] { return conn_->create(dir_, name); }, &retried);
  if (lost(c)) return;  // perhaps created: never used again, never checked
  ++totals_.creates;
  if (c.status == kNfs3ErrExist && retried && exists(dir_path() + "/" + name)) {
    // The first attempt created it; its reply was lost (JUKEBOX). As a program
    // that opens with O_CREAT would, take the file.
    auto l = conn_->lookup(dir_, name);
    if (lost(l)) return;
    if (l.status != kNfs3Ok) return (void)fail("LOOKUP after a retried CREATE: " + std::to_string(l.status));
    ++totals_.retried_already_done;
    c.status = kNfs3Ok;
    c.handle = l.handle;
  }
  if (c.status != kNfs3Ok || c.handle.empty()) return (void)fail("CREATE " + name + ": status " + std::to_string(c.status));
  FileModel f;
  f.id = id;
  f.handle = c.handle;
  f.name = name;
  std::lock_guard lock(model_mu_);
  files_.emplace(id, std::move(f));
}

void LoadClient::write_stable(FileModel& f) {
  const unsigned index = rng_() % kLoadChunksPerFile;
  const unsigned version = f.next_version++;
  {
    std::lock_guard lock(model_mu_);
    f.unsure[index] = true;
  }
  const std::string bytes = chunk_bytes(id_, f.id, index, version);
  auto w = with_retries([&] { return conn_->write(f.handle, std::uint64_t{index} * kLoadChunk, bytes, kFileSync); },
                        nullptr);
  if (lost(w)) return;
  check_status(w, "WRITE FILE_SYNC");
  if (w.status != kNfs3Ok) return;
  totals_.saw_verifier(w.verf);
  if (w.count != kLoadChunk || w.committed != kFileSync) {
    fail("WRITE FILE_SYNC answered count " + std::to_string(w.count) + " committed " + std::to_string(w.committed));
    return;
  }
  std::lock_guard lock(model_mu_);
  f.unsure.erase(index);
  f.acked[index] = version;
  ++totals_.acked_writes;
}

void LoadClient::write_unstable(FileModel& f) {
  // Longer batches when only UNSTABLE writes run: an origin restart then most
  // likely falls between a batch's writes and its COMMIT.
  const unsigned n = options_.unstable_only ? 4 + rng_() % 3 : 2 + rng_() % 2;
  std::map<unsigned, unsigned> batch;
  {
    std::lock_guard lock(model_mu_);
    for (unsigned i = 0; i < n; ++i) {
      const unsigned index = rng_() % kLoadChunksPerFile;
      batch[index] = f.next_version++;
      f.unsure[index] = true;
    }
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::optional<std::uint64_t> verf;
    bool same_verf = true;
    for (const auto& [index, version] : batch) {
      const std::string bytes = chunk_bytes(id_, f.id, index, version);
      auto w = with_retries(
          [&] { return conn_->write(f.handle, std::uint64_t{index} * kLoadChunk, bytes, kUnstable); }, nullptr);
      if (lost(w)) return;
      check_status(w, "WRITE UNSTABLE");
      if (w.status != kNfs3Ok) return;
      if (w.count != kLoadChunk) return (void)fail("WRITE UNSTABLE short: " + std::to_string(w.count));
      totals_.saw_verifier(w.verf);
      if (verf && *verf != w.verf) same_verf = false;
      verf = w.verf;
    }
    if (options_.commit_delay.count() > 0)
      nfsgw::test::pass_time(options_.commit_delay, "a client that commits a while after its writes");
    auto c = with_retries([&] { return conn_->commit(f.handle); }, nullptr);
    if (lost(c)) return;
    check_status(c, "COMMIT");
    if (c.status != kNfs3Ok) return;
    totals_.saw_verifier(c.verf);
    if (same_verf && c.verf == *verf) {
      std::lock_guard lock(model_mu_);
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

void LoadClient::read_back(FileModel& f) {
  const unsigned index = rng_() % kLoadChunksPerFile;
  auto r = with_retries([&] { return conn_->read(f.handle, std::uint64_t{index} * kLoadChunk, kLoadChunk); }, nullptr);
  if (lost(r)) return;
  check_status(r, "READ");
  ++totals_.reads_through;
}

void LoadClient::rename(FileModel& f) {
  const std::string from = f.name;
  const std::string to = "f" + std::to_string(f.id) + ".r" + std::to_string(rng_() % 1000);
  if (to == from) return;
  bool retried = false;
  auto r = with_retries([&] { return conn_->rename(dir_, from, dir_, to); }, &retried);
  if (lost(r)) {
    std::lock_guard lock(model_mu_);
    f.maybe = {from, to};  // either; not renamed again
    return;
  }
  ++totals_.renames;
  if (r.status == kNfs3ErrNoent && retried && exists(dir_path() + "/" + to) && !exists(dir_path() + "/" + from)) {
    ++totals_.retried_already_done;  // the first attempt renamed it
    r.status = kNfs3Ok;
  }
  check_status(r, "RENAME " + from + " -> " + to);
  if (r.status == kNfs3Ok) {
    std::lock_guard lock(model_mu_);
    f.name = to;
  }
}

void LoadClient::remove(std::map<unsigned, FileModel>::iterator it) {
  FileModel& f = it->second;
  if (!f.maybe.empty()) return;
  const std::string name = f.name;
  bool retried = false;
  auto r = with_retries([&] { return conn_->remove(dir_, name); }, &retried);
  std::lock_guard lock(model_mu_);
  if (lost(r)) {
    files_.erase(it);  // perhaps removed: no longer checked
    return;
  }
  ++totals_.removes;
  if (r.status == kNfs3ErrNoent && retried && !exists(dir_path() + "/" + name)) {
    ++totals_.retried_already_done;  // the first attempt removed it
    r.status = kNfs3Ok;
  }
  check_status(r, "REMOVE " + name);
  if (r.status == kNfs3Ok) removed_.push_back(name);
  files_.erase(it);
}

void LoadClient::verify(std::uint16_t port) {
  if (!connect(port)) {
    fail("connect for the check failed");
    return;
  }
  for (auto& [id, f] : files_) {
    auto a = conn_->getattr(f.handle);
    if (!a.transport_ok) {
      fail("GETATTR after the fault failed on the transport: " + a.error);
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

std::string LoadClient::path_of(const FileModel& f) const {
  const std::vector<std::string> names = f.maybe.empty() ? std::vector<std::string>{f.name} : f.maybe;
  for (const auto& n : names)
    if (exists(dir_path() + "/" + n)) return dir_path() + "/" + n;
  return {};
}

void LoadClient::verify_reads(std::uint16_t port) {
  if (!connect(port)) {
    fail("connect for the reads failed");
    return;
  }
  for (auto& [id, f] : files_) {
    const std::string path = path_of(f);
    if (path.empty()) continue;  // check_on_origin says so
    const std::string disk = read_whole(path);
    std::string through;
    for (std::uint64_t off = 0; off < disk.size() + 1;) {
      auto r = conn_->read(f.handle, off, 64 * 1024);
      if (!r.transport_ok || r.status != kNfs3Ok) {
        fail("READ of file " + std::to_string(id) + " for the check: " + std::to_string(r.status) + " " + r.error);
        return;
      }
      through.append(r.data.begin(), r.data.end());
      off += r.data.size();
      if (r.eof || r.data.empty()) break;
    }
    if (through != disk)
      fail("file " + path + ": READ through the gateway (" + std::to_string(through.size()) +
           " bytes) is not the origin's disk (" + std::to_string(disk.size()) + " bytes)");
  }
}

void LoadClient::check_on_origin(const FileModel& f) {
  const std::string path = path_of(f);
  if (path.empty()) {
    fail("file " + std::to_string(f.id) + " (" + f.name + ") is not on the origin");
    return;
  }
  const std::string bytes = read_whole(path);
  for (const auto& [index, version] : f.acked) {
    if (f.unsure.count(index)) continue;  // written again since, not acknowledged
    const std::size_t off = std::size_t{index} * kLoadChunk;
    if (bytes.size() < off + kLoadChunk || bytes.compare(off, kLoadChunk, chunk_bytes(id_, f.id, index, version)) != 0)
      fail("file " + path + ": acknowledged chunk " + std::to_string(index) + " (version " + std::to_string(version) +
           ") is not on the origin");
    else
      totals_.bytes_verified += kLoadChunk;
  }
}

std::vector<std::pair<std::string, std::uint64_t>> LoadClient::uncommitted_chunks() const {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  std::lock_guard lock(model_mu_);
  for (const auto& [id, f] : files_) {
    if (!f.maybe.empty()) continue;
    for (const auto& [index, yes] : f.unsure)
      out.emplace_back(dir_path() + "/" + f.name, std::uint64_t{index} * kLoadChunk);
  }
  return out;
}

}  // namespace integ
