// The differential tester's set-up: one nfs-ganesha origin on loopback and one
// nfsgw in front of it whose exports all show one origin tree T (a fresh folder
// per run, so a replay starts from nothing without restarting ganesha):
//   /rw      T, ttl, every window 1 h
//   /ro      T, access "ro", ttl, every window 1 h
//   /strict  T, consistency "strict" (other windows at their defaults)
//   /sub     T/sub (a subtree: its root is a folder of the others), ttl, 1 h
//   /imm     T, consistency "immutable"
//   /short   T, ttl, every window 2 s (1 s in the second reload variant)
//   /back    T, ttl, every window 1 h, writes = "back", write_back_delay 1 h
//            (50 min in the second reload variant): data written through it
//            stays dirty in nfsgw until a flush (`nfsgw flush`, or a WRITE, a
//            SETATTR of the size or a REMOVE that makes nfsgw flush the file)
// Clients: three users with AUTH_SYS credentials of their own (not root, so squash
// changes nothing), each with a connection to nfsgw and one to the origin, and a
// root connection to the origin that the oracle asks for the truth.
// Ports N, N+1, N+2 for the origin's NFS and MOUNT and nfsgw; N is --port-base,
// 30300 by default (docs/difftest.md).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/difftest/history.h"
#include "tests/difftest/nfs3_client.h"

namespace integ {
class GaneshaOrigin;
class Gateway;
}  // namespace integ

namespace difftest {

struct ExportDef {
  const char* path;
  Promise promise;
  bool read_only;
  bool subtree;  // shows T/sub rather than T
  bool write_back = false;  // writes = "back"
};

constexpr int kExports = 7;
constexpr int kBackExport = 6;  // /back
/// The exports, with the promise the oracle holds each to (the longest window of
/// either reload variant).
const std::array<ExportDef, kExports>& exports();

struct User {
  std::uint32_t uid, gid;
  std::vector<std::uint32_t> groups;
  const char* name;
};
constexpr int kUsers = 3;
const std::array<User, kUsers>& users();

class World {
 public:
  /// Scratch space under `work_dir` (nfsgw's config, cache and log per run); the
  /// origin listens on port_base (NFS) and port_base + 1 (MOUNT), nfsgw on port_base + 2.
  World(std::string work_dir, std::uint16_t port_base);
  ~World();

  /// Starts the origin (once per process).
  void start_origin();
  /// Connects the origin's clients again, after one went unanswered.
  void reconnect_origin();
  /// A fresh tree T (and T/sub) at the origin and a fresh nfsgw (new cache dir)
  /// showing it; connects every client and mounts every export. Throws on failure.
  void fresh(int round);
  /// kill -9 of nfsgw, started again on the same cache dir; clients reconnect.
  void kill_restart();
  /// Writes configuration variant 0 or 1 and has nfsgw reload it, by `nfsgw reload`
  /// or by SIGHUP (not waited for: calls right after see either configuration).
  void reload(int variant, bool sighup);
  /// `nfsgw flush --config F` (everything dirty committed at the origin); false
  /// with its output in `output` when it fails or takes more than a minute.
  bool flush(std::string& output);
  /// Stops nfsgw (SIGTERM) and removes the run's scratch space.
  void finish_run();

  Nfs3Client& gateway(int user) { return *gw_[static_cast<std::size_t>(user)]; }
  Nfs3Client& origin(int user) { return *origin_[static_cast<std::size_t>(user)]; }
  /// Root at the origin: the oracle's view of the truth.
  Nfs3Client& truth() { return *truth_; }

  const Handle& gateway_root(int exp) const { return gw_roots_[static_cast<std::size_t>(exp)]; }
  const Handle& origin_tree() const { return origin_tree_; }
  const Handle& origin_sub() const { return origin_sub_; }
  bool gateway_running() const;
  std::string gateway_log_tail(std::size_t bytes = 4000) const;
  std::string origin_log_tail(std::size_t bytes = 4000) const;

 private:
  void connect_all();

  std::string work_dir_, run_dir_, tree_;
  std::uint16_t origin_nfs_port_, origin_mount_port_, gateway_port_;
  std::unique_ptr<integ::GaneshaOrigin> origin_server_;
  std::unique_ptr<integ::Gateway> gateway_;
  std::array<std::unique_ptr<Nfs3Client>, kUsers> gw_, origin_;
  std::unique_ptr<Nfs3Client> truth_;
  std::array<Handle, kExports> gw_roots_;
  Handle origin_tree_, origin_sub_;
};

}  // namespace difftest
