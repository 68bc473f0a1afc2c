#include "tools/nfsgw-bench/lock_workload.h"

#include <string>

#include "tools/nfsgw-bench/file_picker.h"

namespace nfsgw::bench {
namespace {

class LockLoad : public Workload {
 public:
  LockLoad(const RunData& d, FilePicker picker, unsigned thread) : d_(d), picker_(picker), thread_(thread) {}
  unsigned calls_per_unit() const override { return 2; }

  bool start(Connection& c, std::function<void()> done) override {
    const std::uint64_t n = next_++;
    auto l = std::make_shared<NlmLock>();
    l->fh = d_.file_fhs[picker_.next().file];
    l->owner = "nb-" + std::to_string(thread_) + "-" + std::to_string(n);
    l->svid = static_cast<std::uint32_t>(n);
    l->offset = n;
    l->length = 1;
    return c.nlm_lock(*l, [&c, l, done](const Reply& r) {
      if (!r.ok() || !c.nlm_unlock(*l, [done](const Reply&) { done(); })) done();
    });
  }

 private:
  const RunData& d_;
  FilePicker picker_;
  unsigned thread_;
  std::uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_lock_workload(const Options& o, const RunData& data, unsigned thread,
                                             unsigned threads) {
  FilePicker picker(o.files, o.sequential, o.seed * 1000003u + thread, thread, threads);
  return std::make_unique<LockLoad>(data, picker, thread);
}

}  // namespace nfsgw::bench
