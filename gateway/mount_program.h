// The MOUNT program (versions 1 and 3): hands out export root handles.
//
// MNT answers from the configuration alone (the root handle does not embed the
// origin's), so clients can mount while the origin is still unreachable; the first
// call on the handle then waits for the origin like a hard mount.
//
// What the program tells whom: EXPORT lists only the exports whose `clients`
// admit the caller (an empty list for a caller no export admits), and DUMP only
// the mounts of those exports (the same). The mount list DUMP reads is
// informational (RFC 1813 5.0) and bounded: past `max_mounts` entries the oldest
// is dropped.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/handle_codec.h"
#include "config/config.h"
#include "gateway/nfs3_program.h"
#include "protocol/mount3_types.h"

namespace nfsgw {

class MountProgram {
 public:
  /// `nfs` (gateway handles in and out) resolves paths below an export's root, so
  /// clients may mount a subfolder of an export as they can on the origin.
  /// `exports` must outlive the program (see update()).
  MountProgram(const std::vector<config::ExportConfig>& exports, cache::HandleCodec& handles,
               Nfs3Program& nfs, std::size_t max_mounts = kMaxMounts);

  /// A configuration reload: from now on MNT, EXPORT and DUMP answer from
  /// `exports` (a removed export is refused like one never configured; its mounts
  /// leave DUMP). `exports`, like every earlier list, must outlive the program.
  /// Concurrent with calls; not with itself.
  void update(const std::vector<config::ExportConfig>& exports);

  /// The default bound of the mount list.
  static constexpr std::size_t kMaxMounts = 1024;

  Awaitable<mount3::MntRes> mnt(const CallContext& ctx, const mount3::MntArgs& args);
  /// The mounts of the exports that admit `client_address`.
  mount3::DumpRes dump(const std::string& client_address);
  void umnt(const std::string& client_address, const mount3::UmntArgs& args);
  void umntall(const std::string& client_address);
  mount3::ExportRes exports(const std::string& client_address) const;

 private:
  /// The export whose path is `dirpath` or its longest prefix; `rest` gets the
  /// components below it.
  const config::ExportConfig* find(const std::vector<config::ExportConfig>& exports, const std::string& dirpath,
                                   std::vector<std::string>& rest) const;
  const std::vector<config::ExportConfig>& current() const { return *exports_.load(std::memory_order_acquire); }

  struct Mount {
    mount3::MountEntry entry;
    std::uint32_t export_id = 0;
  };

  std::atomic<const std::vector<config::ExportConfig>*> exports_;
  cache::HandleCodec& handles_;
  Nfs3Program& nfs_;
  std::size_t max_mounts_;
  std::mutex mu_;
  std::deque<Mount> mounts_;  // for DUMP, oldest first; informational only (RFC 1813)
};

}  // namespace nfsgw
