// Which files hold bytes the origin acknowledged UNSTABLE and has not committed,
// and under which write verifier: what the data cache must forget when the origin
// restarts.
//
// An origin that restarts may lose the bytes of UNSTABLE writes it had not yet
// committed; it says so by answering later WRITEs and COMMITs with another write
// verifier (RFC 1813, 3.3.7 and 3.3.21), and the client writes those bytes again.
// Meanwhile the data cache may hold them: patched into cached blocks when the WRITE
// was answered, or fetched from the origin's memory before it restarted. A block's
// Stamp (size, mtime, ctime) usually shows the loss (the file's attributes go back
// too), but attributes come through the metadata cache's window, so the verifier
// is the origin's own word: when it changes, the blocks of every file written
// UNSTABLE since the last COMMIT (of the whole file) are dropped.
//
// Bounded: at most `max_files` files are tracked; a file written UNSTABLE when the
// set is full is not tracked and its blocks are dropped at once instead. Safe from
// any thread. No I/O: the caller drops the blocks.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "protocol/nfs3_types.h"

namespace nfsgw::datacache {

/// What to forget after a reply: these files' blocks, and whether it is because
/// the verifier changed.
struct Forget {
  std::vector<nfs3::FileHandle> files;
  bool verifier_changed = false;
};

class UncommittedWrites {
 public:
  explicit UncommittedWrites(std::size_t max_files = 4096) : max_files_(max_files) {}

  /// A WRITE of `fh` the origin answered with `verf`; `unstable` when it answered
  /// committed = UNSTABLE. Returns the files whose blocks must be dropped now: every
  /// tracked file when the verifier changed (`fh` among them if it was tracked),
  /// or `fh` alone when it cannot be tracked (the set is full).
  Forget written(const nfs3::FileHandle& fh, const nfs3::WriteVerf& verf, bool unstable);
  /// A COMMIT of `fh` answered with `verf`; `whole_file` when it asked for every
  /// byte (count 0). Returns the files whose blocks must be dropped now (the
  /// verifier changed).
  Forget committed(const nfs3::FileHandle& fh, const nfs3::WriteVerf& verf, bool whole_file);

  /// Files tracked now.
  std::size_t files() const;
  /// Times a changed verifier was seen (the origin restarted).
  std::size_t verifier_changes() const;

 private:
  /// With mu_ held: when `verf` is not the one seen last, takes every tracked file
  /// out (returned) and remembers `verf`.
  Forget on_verifier(const nfs3::WriteVerf& verf);
  static std::string key(const nfs3::FileHandle& fh);

  const std::size_t max_files_;
  mutable std::mutex mu_;
  std::optional<nfs3::WriteVerf> verf_;
  std::unordered_set<std::string> files_;  // handle bytes
  std::size_t changes_ = 0;
};

}  // namespace nfsgw::datacache
