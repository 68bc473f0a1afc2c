#include "tools/nfsgw-bench/write_workloads.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <limits>

#include "tools/nfsgw-bench/call_stats.h"

namespace nfsgw::bench {
// Helpers in a namespace named after the file (unity builds).
namespace write_workloads {

constexpr std::uint32_t kFileMode = 0644;

std::string numbered(char prefix, unsigned i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%06u", prefix, i);
  return buf;
}

std::string status_of(const Reply& r) {
  return r.transport_error.empty() ? nfs3_status_name(r.status) : r.transport_error;
}

/// What both write workloads share: the failure that ends the run, the counters.
class WriteLoadBase : public Workload {
 public:
  WriteLoadBase(const Options& o, const RunData& d, WriteCounters* n) : o_(o), d_(d), n_(n) {}
  std::string failure() const override { return failure_; }

 protected:
  void fail(const std::string& why) {
    if (failure_.empty()) failure_ = why;
  }
  /// The file's content at byte x is write_buf[x % --size] (so the bytes a WRITE
  /// of the rest of a short WRITE carries are where they belong).
  const std::uint8_t* data_at(std::uint64_t offset) const { return d_.write_buf.data() + offset % o_.size; }

  const Options& o_;
  const RunData& d_;
  WriteCounters* n_;
  std::string failure_;
};

class SeqWriteLoad : public WriteLoadBase {
 public:
  SeqWriteLoad(const Options& o, const RunData& d, unsigned thread, unsigned threads, WriteCounters* n)
      : WriteLoadBase(o, d, n), thread_(thread), threads_(threads) {
    mine_ = o.connections > thread ? (o.connections - thread + threads - 1) / threads : 0;
  }

  unsigned calls_per_unit() const override {
    const std::uint64_t writes = (o_.file_size + o_.size - 1) / o_.size;
    return static_cast<unsigned>(std::min<std::uint64_t>(writes + 2, std::numeric_limits<unsigned>::max()));
  }
  bool has_work() const override { return failure_.empty() && started_ < mine_; }

  bool start(Connection& c, std::function<void()> done) override {
    auto j = std::make_shared<Job>();
    j->c = &c;
    j->name = seqwrite_name(thread_ + started_ * threads_);
    j->done = std::move(done);
    ++started_;
    return c.create(d_.dir_fh, j->name, kFileMode, [this, j](const Reply& r) {
      if (!r.ok() || r.fh.empty()) {
        fail("seqwrite: CREATE " + j->name + " failed: " + (r.ok() ? "no handle" : status_of(r)));
        return finish(j);
      }
      j->fh = r.fh;
      pump(j);
    });
  }

 private:
  struct Job {
    Connection* c = nullptr;
    std::string name;
    FileHandle fh;
    std::uint64_t next = 0;       // first byte not sent yet
    unsigned outstanding = 0;     // WRITEs in flight
    bool have_verf = false;
    std::array<std::uint8_t, 8> verf{};
    bool over = false;
    std::function<void()> done;
  };
  using JobPtr = std::shared_ptr<Job>;

  void finish(const JobPtr& j) {
    if (j->over) return;
    j->over = true;
    j->done();
  }

  bool same_verf(const JobPtr& j, const std::array<std::uint8_t, 8>& v) {
    if (!j->have_verf) {
      j->have_verf = true;
      j->verf = v;
    }
    return j->verf == v;
  }

  void pump(const JobPtr& j) {
    while (failure_.empty() && j->outstanding < o_.inflight && j->next < o_.file_size) {
      const std::uint64_t off = j->next;
      const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(o_.size, o_.file_size - off));
      j->next += n;
      send(j, off, n);
    }
    if (j->outstanding > 0) return;
    if (!failure_.empty()) return finish(j);
    if (j->next >= o_.file_size) commit(j);
  }

  void send(const JobPtr& j, std::uint64_t off, std::uint32_t n) {
    ++j->outstanding;
    bool queued = j->c->write(j->fh, off, data_at(off), n, o_.file_sync, [this, j, off, n](const Reply& r) {
      --j->outstanding;
      if (!r.ok()) {
        fail("seqwrite: WRITE of " + std::to_string(n) + " bytes at " + std::to_string(off) + " of " + j->name +
             ": " + status_of(r));
      } else if (r.count == 0 || r.count > n) {
        fail("seqwrite: WRITE of " + std::to_string(n) + " bytes at " + std::to_string(off) + " of " + j->name +
             " answered " + std::to_string(r.count) + " bytes");
      } else {
        n_->bytes += r.count;
        if (!same_verf(j, r.verf))
          fail("seqwrite: the write verifier of " + j->name + " changed between WRITEs (the server restarted)");
        if (r.count < n) {
          ++n_->short_writes;
          send(j, off + r.count, n - r.count);
        }
      }
      pump(j);
    });
    if (!queued) {
      --j->outstanding;
      fail("seqwrite: could not queue a WRITE of " + j->name);
    }
  }

  void commit(const JobPtr& j) {
    bool queued = j->c->commit(j->fh, [this, j](const Reply& r) {
      if (!r.ok()) {
        fail("seqwrite: COMMIT of " + j->name + ": " + status_of(r));
      } else if (!o_.file_sync && !same_verf(j, r.verf)) {
        fail("seqwrite: the COMMIT verifier of " + j->name +
             " differs from its WRITEs' (the server restarted; a client would send them again)");
      } else {
        ++n_->files;
      }
      finish(j);
    });
    if (!queued) {
      fail("seqwrite: could not queue the COMMIT of " + j->name);
      finish(j);
    }
  }

  unsigned thread_, threads_;
  unsigned mine_ = 0;
  unsigned started_ = 0;
};

class UnpackLoad : public WriteLoadBase {
 public:
  UnpackLoad(const Options& o, const RunData& d, unsigned thread, unsigned threads, WriteCounters* n)
      : WriteLoadBase(o, d, n), next_(thread), threads_(threads) {}

  unsigned calls_per_unit() const override { return 4; }
  bool has_work() const override { return failure_.empty() && next_ < o_.files; }

  bool start(Connection& c, std::function<void()> done) override {
    auto j = std::make_shared<Job>();
    j->c = &c;
    j->name = unpack_name(next_);
    j->done = std::move(done);
    next_ += threads_;
    return c.create(d_.dir_fh, j->name, kFileMode, [this, j](const Reply& r) {
      if (!r.ok() || r.fh.empty()) return end(j, "CREATE", r.ok() ? "no handle" : status_of(r));
      j->fh = r.fh;
      write(j, 0);
    });
  }

 private:
  struct Job {
    Connection* c = nullptr;
    std::string name;
    FileHandle fh;
    std::array<std::uint8_t, 8> verf{};
    std::function<void()> done;
  };
  using JobPtr = std::shared_ptr<Job>;

  /// Ends the request; `step` non-empty: it failed there.
  void end(const JobPtr& j, const std::string& step, const std::string& why) {
    if (!step.empty()) fail("unpack: " + step + " of " + j->name + ": " + why);
    j->done();
  }

  void write(const JobPtr& j, std::uint32_t from) {
    const std::uint32_t n = o_.size - from;
    bool queued = j->c->write(j->fh, from, data_at(from), n, o_.file_sync, [this, j, from, n](const Reply& r) {
      if (!r.ok()) return end(j, "WRITE", status_of(r));
      if (r.count == 0 || r.count > n) return end(j, "WRITE", "answered " + std::to_string(r.count) + " bytes");
      n_->bytes += r.count;
      if (from == 0) j->verf = r.verf;
      if (r.verf != j->verf) return end(j, "WRITE", "the write verifier changed (the server restarted)");
      if (r.count < n) {
        ++n_->short_writes;
        return write(j, from + r.count);
      }
      commit(j);
    });
    if (!queued) end(j, "WRITE", "could not queue it");
  }

  void commit(const JobPtr& j) {
    bool queued = j->c->commit(j->fh, [this, j](const Reply& r) {
      if (!r.ok()) return end(j, "COMMIT", status_of(r));
      if (!o_.file_sync && r.verf != j->verf)
        return end(j, "COMMIT", "the verifier differs from the WRITE's (the server restarted)");
      setattr(j);
    });
    if (!queued) end(j, "COMMIT", "could not queue it");
  }

  void setattr(const JobPtr& j) {
    bool queued = j->c->setattr(j->fh, kFileMode, o_.setattr_times ? kUnpackMtime : 0, [this, j](const Reply& r) {
      if (!r.ok()) return end(j, "SETATTR", status_of(r));
      ++n_->files;
      end(j, "", "");
    });
    if (!queued) end(j, "SETATTR", "could not queue it");
  }

  unsigned next_;
  unsigned threads_;
};

}  // namespace write_workloads

std::string seqwrite_name(unsigned i) { return write_workloads::numbered('w', i); }
std::string unpack_name(unsigned i) { return write_workloads::numbered('u', i); }

std::unique_ptr<Workload> make_write_workload(const Options& o, const RunData& data, unsigned thread,
                                              unsigned threads, WriteCounters* counters) {
  if (o.mode == Mode::SeqWrite) return std::make_unique<write_workloads::SeqWriteLoad>(o, data, thread, threads, counters);
  if (o.mode == Mode::Unpack) return std::make_unique<write_workloads::UnpackLoad>(o, data, thread, threads, counters);
  return nullptr;
}

}  // namespace nfsgw::bench
