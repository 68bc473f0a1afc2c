#include "tools/nfsgw-bench/walk_workload.h"

#include <memory>

namespace nfsgw::bench {
namespace {

constexpr std::uint32_t kDirCount = 16384;
constexpr std::uint32_t kMaxCount = 65536;
constexpr std::uint32_t kTypeDir = 2;

void push_listing(TaskQueue& q, std::shared_ptr<FileHandle> dir, std::uint64_t cookie,
                  std::array<std::uint8_t, 8> verf, WalkCounters* counters);

void push_getattr(TaskQueue& q, FileHandle fh) {
  q.push([fh = std::move(fh)](Connection& c, std::function<void()> done) {
    return c.getattr(fh, [done](const Reply&) { done(); });
  });
}

/// An entry without a handle in the listing: LOOKUP it, then treat it alike.
void push_lookup(TaskQueue& q, std::shared_ptr<FileHandle> dir, std::string name,
                 WalkCounters* counters) {
  TaskQueue* qp = &q;
  q.push([qp, dir, name, counters](Connection& c, std::function<void()> done) {
    return c.lookup(*dir, name, [qp, counters, done](const Reply& r) {
      if (r.ok() && !r.fh.empty()) {
        push_getattr(*qp, r.fh);
        if (r.attr.present && r.attr.type == kTypeDir)
          push_listing(*qp, std::make_shared<FileHandle>(r.fh), 0, {}, counters);
      }
      done();
    });
  });
}

void push_listing(TaskQueue& q, std::shared_ptr<FileHandle> dir, std::uint64_t cookie,
                  std::array<std::uint8_t, 8> verf, WalkCounters* counters) {
  TaskQueue* qp = &q;
  q.push([qp, dir, cookie, verf, counters](Connection& c, std::function<void()> done) {
    return c.readdirplus(*dir, cookie, verf, kDirCount, kMaxCount,
                         [qp, dir, cookie, counters, done](const Reply& r) {
      if (!r.ok()) return done();  // counted by status; the walk goes on, as ls does
      std::uint64_t last = cookie;
      for (const DirEntry& e : r.entries) {
        last = e.cookie;
        if (e.name == "." || e.name == "..") continue;
        ++counters->entries;
        if (!e.has_handle) {
          push_lookup(*qp, dir, e.name, counters);
          continue;
        }
        push_getattr(*qp, e.fh);
        if (e.attr.present && e.attr.type == kTypeDir)
          push_listing(*qp, std::make_shared<FileHandle>(e.fh), 0, {}, counters);
      }
      if (r.eof) {
        ++counters->dirs;
      } else if (r.entries.empty() || last == cookie) {
        qp->fail("walk: READDIRPLUS returned no progress without eof");
      } else {
        push_listing(*qp, dir, last, r.cookieverf, counters);
      }
      done();
    });
  });
}

}  // namespace

void push_walk(TaskQueue& q, const FileHandle& dir, WalkCounters* counters) {
  push_listing(q, std::make_shared<FileHandle>(dir), 0, {}, counters);
}

}  // namespace nfsgw::bench
