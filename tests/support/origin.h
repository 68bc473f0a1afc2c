// A real NFSv3 origin for integration tests: nfs-ganesha (VFS FSAL) on loopback,
// started through scripts/origin-ganesha.sh with fixed per-port directories
// (/tmp/integ-origin-<nfs port>/{state,export}) so a crashed previous run's server
// is found and stopped before a new one is started on the same ports.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace integ {

class GaneshaOrigin {
 public:
  GaneshaOrigin(std::uint16_t nfs_port, std::uint16_t mount_port);
  ~GaneshaOrigin();  // stops the server and removes its directories
  GaneshaOrigin(const GaneshaOrigin&) = delete;
  GaneshaOrigin& operator=(const GaneshaOrigin&) = delete;

  /// Stops a leftover server, empties the export directory and starts ganesha.
  /// Throws (with ganesha's log) when it does not come up within the script's bound.
  void start();
  void stop();
  bool started() const { return started_; }
  /// SIGSTOP / SIGCONT ganesha: frozen, it keeps its sockets open (its kernel
  /// still accepts connections and data) and answers nothing.
  void freeze();
  void thaw();
  /// SIGKILL ganesha (a crash: what it had not written to its disk is gone) and
  /// wait until it has exited; `start_again()` starts it on the same export, files
  /// kept (a restarted server: its write verifier changes).
  void kill9();
  void start_again();

  /// The exported folder on this machine: tests compare files here byte for byte.
  const std::string& export_dir() const { return export_dir_; }
  /// libnfs URL of the export root: nfs://127.0.0.1<export_dir>?nfsport=N&mountport=M
  std::string url() const;
  std::uint16_t nfs_port() const { return nfs_port_; }
  std::uint16_t mount_port() const { return mount_port_; }

 private:
  std::uint16_t nfs_port_, mount_port_;
  std::string base_dir_, state_dir_, export_dir_;
  bool started_ = false;
};

/// Path of scripts/origin-ganesha.sh in the source tree.
std::string origin_script();

/// The origin shared by every test of one binary (ports kOriginNfsPort/MountPort),
/// started by OriginEnvironment before the first test, stopped after the last.
GaneshaOrigin& shared_origin();

class OriginEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
};

}  // namespace integ
