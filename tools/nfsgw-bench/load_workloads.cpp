#include "tools/nfsgw-bench/load_workloads.h"

#include <algorithm>

#include "tools/nfsgw-bench/file_picker.h"
#include "tools/nfsgw-bench/working_set.h"

namespace nfsgw::bench {
namespace {

// All ACCESS3 bits: READ LOOKUP MODIFY EXTEND DELETE EXECUTE, as a shell does.
constexpr std::uint32_t kAccessAll = 0x3f;

class CallLoad : public Workload {
 public:
  CallLoad(const Options& o, const RunData& d, FilePicker picker) : o_(o), d_(d), picker_(picker) {}

  bool start(Connection& c, std::function<void()> done) override {
    auto fin = [done](const Reply&) { done(); };
    switch (o_.mode) {
      case Mode::Null:
        return c.null(fin);
      case Mode::Getattr:
        return c.getattr(d_.file_fhs[picker_.next().file], fin);
      case Mode::Lookup:
        return c.lookup(d_.dir_fh, d_.file_names[picker_.next().file], fin);
      case Mode::LookupMissing:
        return c.lookup(d_.dir_fh, d_.missing_names[picker_.next().file], fin);
      case Mode::Access:
        return c.access(d_.file_fhs[picker_.next().file], kAccessAll, fin);
      case Mode::Read: {
        FilePick p = picker_.next();
        return c.read(d_.file_fhs[p.file], p.round * o_.size, o_.size, fin);
      }
      case Mode::Write:
        return c.write(d_.file_fhs[picker_.next().file], 0, d_.write_buf.data(),
                       static_cast<std::uint32_t>(d_.write_buf.size()), o_.file_sync, fin);
      default:
        return false;
    }
  }

 private:
  const Options& o_;
  const RunData& d_;
  FilePicker picker_;
};

/// One request of a PHP page include: resolve the script by name, stat it,
/// check permissions, read it. A failed step ends the request early (the
/// failure is already counted by status).
class PhpLoad : public Workload {
 public:
  PhpLoad(const Options& o, const RunData& d, FilePicker picker) : o_(o), d_(d), picker_(picker) {}
  unsigned calls_per_unit() const override { return 4; }

  bool start(Connection& c, std::function<void()> done) override {
    const std::string& name = d_.file_names[picker_.next().file];
    std::uint32_t size = std::max<std::uint32_t>(o_.size, 1);
    return c.lookup(d_.dir_fh, name, [&c, done, size](const Reply& r) {
      if (!r.ok() || r.fh.empty()) return done();
      auto fh = std::make_shared<FileHandle>(r.fh);
      auto chain_failed = [done] { done(); };
      bool q1 = c.getattr(*fh, [&c, fh, done, size](const Reply& g) {
        if (!g.ok()) return done();
        bool q2 = c.access(*fh, kAccessAll, [&c, fh, done, size](const Reply& a) {
          if (!a.ok()) return done();
          if (!c.read(*fh, 0, size, [done](const Reply&) { done(); })) done();
        });
        if (!q2) done();
      });
      if (!q1) chain_failed();
    });
  }

 private:
  const Options& o_;
  const RunData& d_;
  FilePicker picker_;
};

/// One mutating request: CREATE (UNCHECKED, mode 0644) of a name no earlier
/// request of this run used, then REMOVE of it once the CREATE has answered.
/// A failed CREATE ends the request (its status is counted like any other).
class ChurnLoad : public Workload {
 public:
  ChurnLoad(const RunData& d, unsigned thread) : d_(d), thread_(thread) {}
  unsigned calls_per_unit() const override { return 2; }

  bool start(Connection& c, std::function<void()> done) override {
    std::string name = churn_name(d_.churn_tag, thread_, next_++);
    const FileHandle* dir = &d_.dir_fh;
    return c.create(*dir, name, 0644, [&c, dir, name, done](const Reply& r) {
      if (!r.ok()) return done();
      if (!c.remove(*dir, name, [done](const Reply&) { done(); })) done();
    });
  }

 private:
  const RunData& d_;
  unsigned thread_;
  std::uint64_t next_ = 0;
};

}  // namespace

bool mode_needs_handles(Mode m) {
  return m == Mode::Getattr || m == Mode::Access || m == Mode::Read || m == Mode::Write || m == Mode::Locks;
}

std::unique_ptr<Workload> make_load_workload(const Options& o, const RunData& data, unsigned thread,
                                             unsigned threads) {
  FilePicker picker(o.files, o.sequential, o.seed * 1000003u + thread, thread, threads);
  if (o.mode == Mode::Php) return std::make_unique<PhpLoad>(o, data, picker);
  if (o.mode == Mode::Walk) return nullptr;
  if (o.mode == Mode::Churn) return std::make_unique<ChurnLoad>(data, thread);
  return std::make_unique<CallLoad>(o, data, picker);
}

}  // namespace nfsgw::bench
