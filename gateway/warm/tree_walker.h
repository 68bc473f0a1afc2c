// The walk of `nfsgw warm`: lists and reads a tree through an Nfs3Program with
// gateway handles (the HandleTranslator, so the calls take the same layers,
// caches and export policy as clients' calls), keeping up to `parallel` calls
// in flight, so that a long link to the origin stays full.
//
// Per object, the calls a client makes before it uses it, so that a client's
// later walk finds every answer cached:
//   - the path to it: ACCESS of each directory on the way, LOOKUP of each name;
//   - the object: GETATTR (unless a listing gave its attributes), ACCESS with
//     every bit (directories and regular files), READLINK (symbolic links);
//   - a directory above the depth limit: READDIRPLUS, every page; each entry is
//     then visited in turn (LOOKUP when the listing gave no handle);
//   - a regular file, with `data`: READs of `read_bytes` covering its size.
// A step that fails is recorded in the progress (its path and why) and the walk
// goes on. Steps wait in a stack (a tree is walked depth first, which bounds
// what waits to about depth x width); a listing that finds the stack longer than
// `max_queued` gives up its place until the stack has shrunk.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "gateway/nfs3_program.h"
#include "gateway/admin/warm_progress.h"

namespace nfsgw::warm {

struct WalkSettings {
  /// Levels to list below each starting path (0: the object itself only); nullopt: all.
  std::optional<std::uint32_t> depth;
  bool data = false;
  std::uint32_t parallel = 32;
  /// READ size for file data (the data cache's block size suits it best).
  std::uint32_t read_bytes = 1u << 20;
  std::size_t max_queued = 65536;
  /// Whom the calls are made for: credentials (before the export's squash), the
  /// client address the export's policy sees. caller_gone is set by the walker.
  CallContext ctx;
};

class TreeWalker : public std::enable_shared_from_this<TreeWalker> {
 public:
  /// `nfs` takes gateway handles; `root` is the export's root handle (as MNT gives
  /// it); `export_path` prefixes the paths named in failures. `nfs` must outlive
  /// the walk (until `done` has been called).
  static std::shared_ptr<TreeWalker> create(boost::asio::any_io_executor ex, Nfs3Program& nfs,
                                            nfs3::FileHandle root, std::string export_path, WalkSettings settings,
                                            std::shared_ptr<WarmProgress> progress);

  /// Walks `subpaths` ("" for the export root, "/a/b" below it; normalised) and
  /// calls `done` once, from an executor thread, when every step has ended (or the
  /// walk was cancelled through the progress). Once only.
  void start(std::vector<std::string> subpaths, std::function<void()> done);

 private:
  struct Step;
  struct PathDone;

  TreeWalker(boost::asio::any_io_executor ex, Nfs3Program& nfs, nfs3::FileHandle root, std::string export_path,
             WalkSettings settings, std::shared_ptr<WarmProgress> progress);

  void push(std::vector<Step> steps);
  /// Starts steps while fewer than `parallel` run.
  void pump();
  void step_ended(bool discovering);
  /// A listing waiting for the stack to shrink runs no call: it gives its place.
  void release_slot();
  void take_slot();
  bool stack_too_long();

  static Awaitable<void> run(std::shared_ptr<TreeWalker> self, Step step);
  Awaitable<void> resolve(Step step);
  Awaitable<void> visit(Step step);
  Awaitable<void> list(const Step& dir);
  Awaitable<void> read(Step step);
  void fail(const std::string& path, const std::string& why);

  boost::asio::any_io_executor ex_;
  Nfs3Program& nfs_;
  const nfs3::FileHandle root_;
  const std::string export_path_;
  const WalkSettings settings_;
  const std::shared_ptr<WarmProgress> progress_;

  std::mutex mu_;
  std::vector<Step> stack_;
  std::uint32_t running_ = 0;
  std::uint32_t waiting_ = 0;  // listings that gave up their place (release_slot)
  bool started_ = false;
  bool finished_ = false;
  std::function<void()> done_;
};

}  // namespace nfsgw::warm
