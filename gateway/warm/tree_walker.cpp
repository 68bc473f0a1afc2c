#include "gateway/warm/tree_walker.h"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/redirect_error.hpp>

#include <spdlog/spdlog.h>

namespace nfsgw::warm {

namespace asio = boost::asio;
using nfs3::Status;

namespace {

constexpr std::uint32_t kAllAccess = nfs3::access::Read | nfs3::access::Lookup | nfs3::access::Modify |
                                     nfs3::access::Extend | nfs3::access::Delete | nfs3::access::Execute;
constexpr std::uint32_t kListDircount = 64u << 10;
constexpr std::uint32_t kListMaxcount = 256u << 10;
/// A listing that ends neither with eof nor with entries is cut off after this many pages.
constexpr int kMaxEmptyPages = 4;

std::string status_text(Status s) {
  std::string name = nfs3::status_name(s);
  // "NFS3ERR_NOENT" reads as "NOENT" for an operator.
  if (name.rfind("NFS3ERR_", 0) == 0) name.erase(0, 8);
  return name;
}

std::vector<std::string> components(const std::string& subpath) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < subpath.size()) {
    const std::size_t next = subpath.find('/', pos);
    const std::size_t end = next == std::string::npos ? subpath.size() : next;
    if (end > pos) out.push_back(subpath.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace

/// Counts a starting path as done once nothing of its walk is left (the last step
/// holding it has ended), unless the walk was cancelled.
struct TreeWalker::PathDone {
  std::shared_ptr<WarmProgress> progress;
  explicit PathDone(std::shared_ptr<WarmProgress> p) : progress(std::move(p)) {}
  ~PathDone() {
    if (!progress->cancelled()) WarmProgress::add(progress->paths_done);
  }
};

struct TreeWalker::Step {
  enum class Kind { Resolve, Visit, Read };
  Kind kind = Kind::Visit;
  nfs3::FileHandle fh;  // Resolve: where the names start; Visit, Read: the object
  std::string path;     // inside the export ("/a/b"), for failures
  std::vector<std::string> names;  // Resolve: the names to look up from `fh`
  std::uint32_t level = 0;         // Visit: levels below its starting path
  std::optional<nfs3::Fattr> attr;  // Visit: when a listing or LOOKUP gave them
  std::uint64_t offset = 0;         // Read
  std::uint32_t count = 0;          // Read
  std::shared_ptr<PathDone> owner;
  bool discovering() const { return kind != Kind::Read; }
};

std::shared_ptr<TreeWalker> TreeWalker::create(asio::any_io_executor ex, Nfs3Program& nfs, nfs3::FileHandle root,
                                               std::string export_path, WalkSettings settings,
                                               std::shared_ptr<WarmProgress> progress) {
  return std::shared_ptr<TreeWalker>(
      new TreeWalker(std::move(ex), nfs, root, std::move(export_path), std::move(settings), std::move(progress)));
}

TreeWalker::TreeWalker(asio::any_io_executor ex, Nfs3Program& nfs, nfs3::FileHandle root, std::string export_path,
                       WalkSettings settings, std::shared_ptr<WarmProgress> progress)
    : ex_(std::move(ex)),
      nfs_(nfs),
      root_(root),
      export_path_(std::move(export_path)),
      settings_([&] {
        WalkSettings s = std::move(settings);
        s.parallel = std::max<std::uint32_t>(1, s.parallel);
        s.read_bytes = std::max<std::uint32_t>(4096, s.read_bytes);
        s.max_queued = std::max<std::size_t>(1, s.max_queued);
        s.ctx.caller_gone = progress->cancel_flag();
        return s;
      }()),
      progress_(std::move(progress)) {}

void TreeWalker::start(std::vector<std::string> subpaths, std::function<void()> done) {
  std::vector<Step> steps;
  WarmProgress::add(progress_->paths_total, subpaths.size());
  // The stack pops from its end: push in reverse, so the paths go in their order.
  for (auto it = subpaths.rbegin(); it != subpaths.rend(); ++it) {
    Step s;
    s.kind = Step::Kind::Resolve;
    s.fh = root_;
    s.path = *it;
    s.names = components(*it);
    s.owner = std::make_shared<PathDone>(progress_);
    steps.push_back(std::move(s));
  }
  {
    std::lock_guard lock(mu_);
    if (started_) throw std::logic_error("TreeWalker::start called twice");
    started_ = true;
    done_ = std::move(done);
  }
  if (steps.empty()) {
    step_ended(false);  // nothing to do: done at once
    return;
  }
  push(std::move(steps));
}

void TreeWalker::push(std::vector<Step> steps) {
  if (steps.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (auto& s : steps) {
      if (s.discovering()) WarmProgress::add(progress_->discovering);
      stack_.push_back(std::move(s));
    }
  }
  pump();
}

void TreeWalker::pump() {
  std::vector<Step> starting;
  std::vector<Step> dropped;  // destroyed outside the lock
  {
    std::lock_guard lock(mu_);
    if (progress_->cancelled()) {
      for (auto& s : stack_) {
        if (s.discovering()) progress_->discovering.fetch_sub(1, std::memory_order_relaxed);
        dropped.push_back(std::move(s));
      }
      stack_.clear();
    }
    while (running_ < settings_.parallel && !stack_.empty()) {
      starting.push_back(std::move(stack_.back()));
      stack_.pop_back();
      ++running_;
    }
  }
  dropped.clear();
  for (auto& s : starting) {
    const bool discovering = s.discovering();
    asio::co_spawn(ex_, run(shared_from_this(), std::move(s)),
                   [self = shared_from_this(), discovering](std::exception_ptr e) {
                     if (e) {
                       try {
                         std::rethrow_exception(e);
                       } catch (const std::exception& ex) {
                         spdlog::error("warm: a step failed: {}", ex.what());
                         self->fail("", std::string("internal error: ") + ex.what());
                       } catch (...) {
                         self->fail("", "internal error");
                       }
                     }
                     self->step_ended(discovering);
                   });
  }
  // With nothing running and nothing left (all cancelled), the walk is over.
  bool finished = false;
  std::function<void()> done;
  {
    std::lock_guard lock(mu_);
    if (started_ && running_ == 0 && waiting_ == 0 && stack_.empty() && !finished_) {
      finished_ = finished = true;
      done = std::move(done_);
    }
  }
  if (finished && done) done();
}

void TreeWalker::step_ended(bool discovering) {
  if (discovering) progress_->discovering.fetch_sub(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(mu_);
    if (running_ > 0) --running_;
  }
  pump();
}

void TreeWalker::release_slot() {
  {
    std::lock_guard lock(mu_);
    if (running_ > 0) --running_;
    ++waiting_;
  }
  pump();
}

void TreeWalker::take_slot() {
  std::lock_guard lock(mu_);
  --waiting_;
  ++running_;
}

bool TreeWalker::stack_too_long() {
  std::lock_guard lock(mu_);
  return stack_.size() > settings_.max_queued;
}

void TreeWalker::fail(const std::string& path, const std::string& why) {
  progress_->fail(export_path_ + path, why);
}

Awaitable<void> TreeWalker::run(std::shared_ptr<TreeWalker> self, Step step) {
  if (self->progress_->cancelled()) co_return;
  switch (step.kind) {
    case Step::Kind::Resolve: co_await self->resolve(std::move(step)); break;
    case Step::Kind::Visit: co_await self->visit(std::move(step)); break;
    case Step::Kind::Read: co_await self->read(std::move(step)); break;
  }
}

Awaitable<void> TreeWalker::resolve(Step step) {
  // The way down: what a client asks on its way to the object.
  nfs3::FileHandle fh = step.fh;
  std::optional<nfs3::Fattr> attr;
  for (const auto& name : step.names) {
    if (progress_->cancelled()) co_return;
    nfs3::AccessArgs aa{fh, kAllAccess};
    const nfs3::AccessRes ar = co_await nfs_.access(settings_.ctx, std::move(aa));
    if (ar.status != Status::Ok) {
      fail(step.path, status_text(ar.status) + " at ACCESS of a directory above it");
      co_return;
    }
    nfs3::LookupArgs la;
    la.what.dir = fh;
    la.what.name = name;
    const nfs3::LookupRes lr = co_await nfs_.lookup(settings_.ctx, std::move(la));
    if (lr.status != Status::Ok) {
      fail(step.path, status_text(lr.status) + " at LOOKUP '" + name + "'");
      co_return;
    }
    fh = lr.object;
    attr = lr.obj_attributes;
  }
  Step visit;
  visit.kind = Step::Kind::Visit;
  visit.fh = fh;
  visit.path = std::move(step.path);
  visit.level = step.level;
  visit.attr = attr;
  visit.owner = std::move(step.owner);
  std::vector<Step> next;
  next.push_back(std::move(visit));
  push(std::move(next));
}

Awaitable<void> TreeWalker::visit(Step step) {
  if (!step.attr) {
    nfs3::GetattrArgs ga{step.fh};
    const nfs3::GetattrRes gr = co_await nfs_.getattr(settings_.ctx, std::move(ga));
    if (gr.status != Status::Ok) {
      fail(step.path, status_text(gr.status) + " at GETATTR");
      co_return;
    }
    step.attr = gr.attributes;
  }
  WarmProgress::add(progress_->entries);
  const nfs3::FileType type = step.attr->type;
  if (type == nfs3::FileType::Dir || type == nfs3::FileType::Reg) {
    if (progress_->cancelled()) co_return;
    nfs3::AccessArgs aa{step.fh, kAllAccess};
    const nfs3::AccessRes ar = co_await nfs_.access(settings_.ctx, std::move(aa));
    if (ar.status != Status::Ok) {
      fail(step.path, status_text(ar.status) + " at ACCESS");
      co_return;
    }
  } else if (type == nfs3::FileType::Lnk) {
    nfs3::ReadlinkArgs ra{step.fh};
    const nfs3::ReadlinkRes rr = co_await nfs_.readlink(settings_.ctx, std::move(ra));
    if (rr.status != Status::Ok) fail(step.path, status_text(rr.status) + " at READLINK");
    co_return;
  }
  if (type == nfs3::FileType::Dir) {
    if (!settings_.depth || step.level < *settings_.depth) co_await list(step);
    co_return;
  }
  if (type == nfs3::FileType::Reg && settings_.data && step.attr->size > 0) {
    const std::uint64_t size = step.attr->size;
    WarmProgress::add(progress_->data_total, size);
    std::vector<Step> reads;
    const std::uint64_t chunks = (size + settings_.read_bytes - 1) / settings_.read_bytes;
    reads.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(chunks, 1u << 16)));
    // In reverse: the stack pops the first chunk first, so a file is read in order
    // (and the data cache's read-ahead sees a sequential reader).
    for (std::uint64_t i = chunks; i-- > 0;) {
      Step r;
      r.kind = Step::Kind::Read;
      r.fh = step.fh;
      r.path = step.path;
      r.offset = i * settings_.read_bytes;
      r.count = static_cast<std::uint32_t>(std::min<std::uint64_t>(settings_.read_bytes, size - r.offset));
      r.owner = step.owner;
      reads.push_back(std::move(r));
    }
    push(std::move(reads));
  }
}

Awaitable<void> TreeWalker::list(const Step& dir) {
  std::uint64_t cookie = 0;
  nfs3::CookieVerf verf{};
  int empty_pages = 0;
  for (;;) {
    if (progress_->cancelled()) co_return;
    nfs3::ReaddirplusArgs ra;
    ra.dir = dir.fh;
    ra.cookie = cookie;
    ra.cookieverf = verf;
    ra.dircount = kListDircount;
    ra.maxcount = kListMaxcount;
    nfs3::ReaddirplusRes res = co_await nfs_.readdirplus(settings_.ctx, std::move(ra));
    if (res.status != Status::Ok) {
      fail(dir.path, status_text(res.status) + " at READDIRPLUS");
      co_return;
    }
    std::vector<Step> children;
    children.reserve(res.entries.size());
    for (auto& e : res.entries) {
      cookie = e.cookie;
      if (e.name == "." || e.name == "..") continue;
      Step c;
      c.path = dir.path + "/" + e.name;
      c.level = dir.level + 1;
      c.owner = dir.owner;
      if (e.name_handle && !e.name_handle->empty()) {
        c.kind = Step::Kind::Visit;
        c.fh = *e.name_handle;
        c.attr = e.name_attributes;
      } else {
        // A server may leave a handle out: a client then looks the name up.
        c.kind = Step::Kind::Resolve;
        c.fh = dir.fh;
        c.names = {e.name};
      }
      children.push_back(std::move(c));
    }
    const bool got_entries = !res.entries.empty();
    // Reversed, so the stack pops them in the listing's order.
    std::reverse(children.begin(), children.end());
    push(std::move(children));
    if (res.eof) break;
    verf = res.cookieverf;
    if (!got_entries && ++empty_pages >= kMaxEmptyPages) {
      fail(dir.path, "READDIRPLUS returned no entries and no end of the listing");
      co_return;
    }
    if (stack_too_long()) {
      // Let the entries found so far be visited before listing more.
      release_slot();
      asio::steady_timer t(co_await asio::this_coro::executor);
      while (stack_too_long() && !progress_->cancelled()) {
        t.expires_after(std::chrono::milliseconds(20));
        boost::system::error_code ec;
        co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      take_slot();
    }
  }
  WarmProgress::add(progress_->dirs);
}

Awaitable<void> TreeWalker::read(Step step) {
  nfs3::ReadArgs ra;
  ra.file = step.fh;
  ra.offset = step.offset;
  ra.count = step.count;
  const nfs3::ReadRes rr = co_await nfs_.read(settings_.ctx, std::move(ra));
  if (rr.status != Status::Ok) {
    fail(step.path, status_text(rr.status) + " at READ of byte " + std::to_string(step.offset));
    co_return;
  }
  WarmProgress::add(progress_->bytes, rr.count);
}

}  // namespace nfsgw::warm
