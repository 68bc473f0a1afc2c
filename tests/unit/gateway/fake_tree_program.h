// A small file tree served as an Nfs3Program (handles are node ids), for tests of
// what walks it (the warm's TreeWalker). Every call waits `delay` on a timer, so
// that calls overlap, and the fake records how many were in flight at most, which
// calls were made, and which credentials they came with. Listings come in pages of
// `page_entries`, without "." and "..".
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "tests/unit/gateway/fake_nfs3_program.h"

namespace nfsgw::test {

class FakeTree : public FakeNfs3Program {
 public:
  struct Node {
    nfs3::FileType type = nfs3::FileType::Reg;
    std::map<std::string, std::uint64_t> children;  // directories
    std::uint64_t size = 0;                          // files
    std::string target;                              // symbolic links
  };

  std::chrono::milliseconds delay{1};
  std::size_t page_entries = 3;
  /// Directories (by id) whose ACCESS answers ACCES; names whose LOOKUP fails.
  std::set<std::uint64_t> deny_access;
  /// When true, listings carry no handles (the walker must LOOKUP each name).
  bool listings_without_handles = false;

  FakeTree() { nodes_[1].type = nfs3::FileType::Dir; }

  static nfs3::FileHandle handle(std::uint64_t id) {
    std::uint8_t b[8];
    std::memcpy(b, &id, 8);
    return nfs3::FileHandle(std::span<const std::uint8_t>(b, 8));
  }
  static std::uint64_t id_of(const nfs3::FileHandle& fh) {
    std::uint64_t id = 0;
    if (fh.len == 8) std::memcpy(&id, fh.bytes.data(), 8);
    return id;
  }

  /// Adds `name` under directory `parent`; returns the new node's id.
  std::uint64_t add(std::uint64_t parent, const std::string& name, nfs3::FileType type, std::uint64_t size = 0) {
    const std::uint64_t id = next_++;
    nodes_[id].type = type;
    nodes_[id].size = size;
    if (type == nfs3::FileType::Lnk) nodes_[id].target = "elsewhere";
    nodes_[parent].children[name] = id;
    return id;
  }

  std::size_t max_in_flight() const { return max_in_flight_.load(); }
  std::size_t count(const std::string& proc) const {
    std::size_t n = 0;
    for (const auto& c : calls())
      if (c.proc == proc) ++n;
    return n;
  }
  /// Bytes asked for by READs, per node.
  std::map<std::uint64_t, std::uint64_t> read_bytes() const {
    std::lock_guard lock(mu_);
    return read_bytes_;
  }

  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) override {
    record("getattr", ctx);
    co_await pause();
    nfs3::GetattrRes r;
    const Node* n = find(args.object);
    if (!n) {
      r.status = nfs3::Status::Stale;
    } else {
      r.attributes = attr(id_of(args.object), *n);
    }
    co_return r;
  }

  Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) override {
    record("lookup", ctx);
    co_await pause();
    nfs3::LookupRes r;
    const Node* d = find(args.what.dir);
    if (!d || d->type != nfs3::FileType::Dir) {
      r.status = d ? nfs3::Status::NotDir : nfs3::Status::Stale;
      co_return r;
    }
    const auto it = d->children.find(args.what.name);
    if (it == d->children.end()) {
      r.status = nfs3::Status::NoEnt;
      co_return r;
    }
    r.object = handle(it->second);
    r.obj_attributes = attr(it->second, *find(r.object));
    co_return r;
  }

  Awaitable<nfs3::AccessRes> access(const CallContext& ctx, nfs3::AccessArgs args) override {
    record("access", ctx);
    co_await pause();
    nfs3::AccessRes r;
    if (deny_access.count(id_of(args.object))) {
      r.status = nfs3::Status::Acces;
    } else {
      r.access = args.access;
    }
    co_return r;
  }

  Awaitable<nfs3::ReadlinkRes> readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) override {
    record("readlink", ctx);
    co_await pause();
    nfs3::ReadlinkRes r;
    const Node* n = find(args.symlink);
    if (!n || n->type != nfs3::FileType::Lnk) {
      r.status = nfs3::Status::Inval;
    } else {
      r.data = n->target;
    }
    co_return r;
  }

  Awaitable<nfs3::ReadRes> read(const CallContext& ctx, nfs3::ReadArgs args) override {
    record("read", ctx);
    co_await pause();
    nfs3::ReadRes r;
    const Node* n = find(args.file);
    if (!n || n->type != nfs3::FileType::Reg) {
      r.status = nfs3::Status::Inval;
      co_return r;
    }
    const std::uint64_t end = std::min<std::uint64_t>(n->size, args.offset + args.count);
    r.count = static_cast<std::uint32_t>(end > args.offset ? end - args.offset : 0);
    r.eof = end >= n->size;
    {
      std::lock_guard lock(mu_);
      read_bytes_[id_of(args.file)] += r.count;
    }
    co_return r;
  }

  Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) override {
    record("readdirplus", ctx);
    co_await pause();
    nfs3::ReaddirplusRes r;
    const Node* d = find(args.dir);
    if (!d || d->type != nfs3::FileType::Dir) {
      r.status = d ? nfs3::Status::NotDir : nfs3::Status::Stale;
      co_return r;
    }
    std::uint64_t i = 0;
    for (const auto& [name, id] : d->children) {
      ++i;
      if (i <= args.cookie) continue;
      if (r.entries.size() == page_entries) break;
      nfs3::DirEntryPlus e;
      e.fileid = id;
      e.name = name;
      e.cookie = i;
      if (!listings_without_handles) {
        e.name_handle = handle(id);
        e.name_attributes = attr(id, nodes_.at(id));
      }
      r.entries.push_back(std::move(e));
    }
    r.eof = r.entries.empty() || r.entries.back().cookie == d->children.size();
    co_return r;
  }

 private:
  const Node* find(const nfs3::FileHandle& fh) const {
    const auto it = nodes_.find(id_of(fh));
    return it == nodes_.end() ? nullptr : &it->second;
  }
  static nfs3::Fattr attr(std::uint64_t id, const Node& n) {
    nfs3::Fattr a;
    a.type = n.type;
    a.fileid = id;
    a.size = n.size;
    a.mode = 0755;
    return a;
  }
  Awaitable<void> pause() {
    const std::size_t now = ++in_flight_;
    std::size_t seen = max_in_flight_.load();
    while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
    }
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
    t.expires_after(delay);
    co_await t.async_wait(boost::asio::use_awaitable);
    --in_flight_;
  }

  std::map<std::uint64_t, Node> nodes_;
  std::uint64_t next_ = 2;
  std::atomic<std::size_t> in_flight_{0}, max_in_flight_{0};
  mutable std::mutex mu_;
  std::map<std::uint64_t, std::uint64_t> read_bytes_;
};

}  // namespace nfsgw::test
