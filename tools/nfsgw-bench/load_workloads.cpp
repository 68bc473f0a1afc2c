#include "tools/nfsgw-bench/load_workloads.h"

#include <algorithm>

namespace nfsgw::bench {
namespace {

// All ACCESS3 bits: READ LOOKUP MODIFY EXTEND DELETE EXECUTE, as a shell does.
constexpr std::uint32_t kAccessAll = 0x3f;

/// splitmix64: tiny, fast, and good enough to pick files.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t s_;
};

class CallLoad : public Workload {
 public:
  CallLoad(const Options& o, const RunData& d, std::uint64_t seed) : o_(o), d_(d), rng_(seed) {}

  bool start(Connection& c, std::function<void()> done) override {
    auto fin = [done](const Reply&) { done(); };
    switch (o_.mode) {
      case Mode::Null:
        return c.null(fin);
      case Mode::Getattr:
        return c.getattr(pick_fh(), fin);
      case Mode::Lookup:
        return c.lookup(d_.dir_fh, d_.file_names[rng_.below(d_.file_names.size())], fin);
      case Mode::LookupMissing:
        return c.lookup(d_.dir_fh, d_.missing_names[rng_.below(d_.missing_names.size())], fin);
      case Mode::Access:
        return c.access(pick_fh(), kAccessAll, fin);
      case Mode::Read:
        return c.read(pick_fh(), 0, o_.size, fin);
      case Mode::Write:
        return c.write(pick_fh(), 0, d_.write_buf.data(), static_cast<std::uint32_t>(d_.write_buf.size()),
                       o_.file_sync, fin);
      default:
        return false;
    }
  }

 private:
  const FileHandle& pick_fh() { return d_.file_fhs[rng_.below(d_.file_fhs.size())]; }

  const Options& o_;
  const RunData& d_;
  Rng rng_;
};

/// One request of a PHP page include: resolve the script by name, stat it,
/// check permissions, read it. A failed step ends the request early (the
/// failure is already counted by status).
class PhpLoad : public Workload {
 public:
  PhpLoad(const Options& o, const RunData& d, std::uint64_t seed) : o_(o), d_(d), rng_(seed) {}
  unsigned calls_per_unit() const override { return 4; }

  bool start(Connection& c, std::function<void()> done) override {
    const std::string& name = d_.file_names[rng_.below(d_.file_names.size())];
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
  Rng rng_;
};

}  // namespace

bool mode_needs_handles(Mode m) {
  return m == Mode::Getattr || m == Mode::Access || m == Mode::Read || m == Mode::Write;
}

std::unique_ptr<Workload> make_load_workload(const Options& o, const RunData& data, std::uint64_t seed) {
  if (o.mode == Mode::Php) return std::make_unique<PhpLoad>(o, data, seed);
  if (o.mode == Mode::Walk) return nullptr;
  return std::make_unique<CallLoad>(o, data, seed);
}

}  // namespace nfsgw::bench
