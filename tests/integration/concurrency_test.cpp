// 64 connections with 16 calls in flight each: every reply must be the right one.
// Each call's expected answer is unique (LOOKUP file_<i> -> that file's fileid,
// GETATTR -> fileid and size, READ -> that file's distinct content), so a reply
// delivered to the wrong call, on the wrong connection, or lost, is detected.
// One thread drives all rpc_contexts with poll(); the whole run has a deadline.
#include <gtest/gtest.h>
// clang-format off
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>
// clang-format on
#include <poll.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/gateway_env.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginAndGatewayEnvironment);

constexpr int kConnections = 64;
constexpr int kInFlight = 16;
constexpr int kCallsPerConnection = 64;
constexpr int kFiles = 200;

std::string content_of(int i) {
  std::string s = "file " + std::to_string(i) + ":";
  for (int k = 0; k < i % 17; ++k) s += std::to_string(i * 31 + k);
  return s;
}

struct Expected {
  Handle handle;
  std::uint64_t fileid = 0;
  std::string content;
};

struct Conn;

/// One call in flight; owned by its connection until the callback fires.
struct Call {
  Conn* conn = nullptr;
  int file = 0;
  int kind = 0;  // 0 LOOKUP, 1 GETATTR, 2 READ
  std::string name;
};

struct Stats {
  int answered = 0;
  int wrong = 0;
  std::vector<std::string> failures;
  void fail(const std::string& why) {
    ++wrong;
    if (failures.size() < 20) failures.push_back(why);
  }
};

struct Conn {
  int index = 0;
  rpc_context* rpc = nullptr;
  bool connected = false;
  bool dead = false;
  int issued = 0;
  int in_flight = 0;
  const std::vector<Expected>* files = nullptr;
  Handle dir;
  Stats* stats = nullptr;
};

void on_reply(rpc_context* rpc, int status, void* data, void* priv) {
  std::unique_ptr<Call> call(static_cast<Call*>(priv));
  Conn& c = *call->conn;
  --c.in_flight;
  ++c.stats->answered;
  const Expected& want = (*c.files)[call->file];
  std::string where = "conn " + std::to_string(c.index) + " file " + std::to_string(call->file) + " kind " +
                      std::to_string(call->kind) + ": ";
  if (status != RPC_STATUS_SUCCESS) {
    c.stats->fail(where + "rpc status " + std::to_string(status));
    return;
  }
  if (call->kind == 0) {
    auto* res = static_cast<LOOKUP3res*>(data);
    if (res->status != NFS3_OK) return c.stats->fail(where + "LOOKUP status " + std::to_string(res->status));
    const auto& ok = res->LOOKUP3res_u.resok;
    Handle got(ok.object.data.data_val, ok.object.data.data_val + ok.object.data.data_len);
    if (got != want.handle) c.stats->fail(where + "LOOKUP returned another handle");
    if (ok.obj_attributes.attributes_follow && ok.obj_attributes.post_op_attr_u.attributes.fileid != want.fileid)
      c.stats->fail(where + "LOOKUP attributes of another file");
  } else if (call->kind == 1) {
    auto* res = static_cast<GETATTR3res*>(data);
    if (res->status != NFS3_OK) return c.stats->fail(where + "GETATTR status " + std::to_string(res->status));
    const auto& a = res->GETATTR3res_u.resok.obj_attributes;
    if (a.fileid != want.fileid || a.size != want.content.size())
      c.stats->fail(where + "GETATTR of another file (fileid " + std::to_string(a.fileid) + ")");
  } else {
    auto* res = static_cast<READ3res*>(data);
    if (res->status != NFS3_OK) return c.stats->fail(where + "READ status " + std::to_string(res->status));
    const auto& ok = res->READ3res_u.resok;
    std::string got(ok.data.data_val, ok.data.data_len);
    if (got != want.content) c.stats->fail(where + "READ returned '" + got.substr(0, 40) + "'");
  }
}

bool issue(Conn& c) {
  auto call = std::make_unique<Call>();
  call->conn = &c;
  call->file = (c.index * 37 + c.issued * 11) % kFiles;
  call->kind = (c.index + c.issued) % 3;
  const Expected& f = (*c.files)[call->file];
  nfs_fh3 fh{};
  int rc = 0;
  Call* raw = call.get();
  if (call->kind == 0) {
    call->name = "file_" + std::to_string(call->file);
    LOOKUP3args args{};
    args.what.dir.data.data_len = static_cast<u_int>(c.dir.size());
    args.what.dir.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(c.dir.data()));
    args.what.name = call->name.data();
    rc = rpc_nfs3_lookup_async(c.rpc, on_reply, &args, raw);
  } else {
    fh.data.data_len = static_cast<u_int>(f.handle.size());
    fh.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(f.handle.data()));
    if (call->kind == 1) {
      GETATTR3args args{};
      args.object = fh;
      rc = rpc_nfs3_getattr_async(c.rpc, on_reply, &args, raw);
    } else {
      READ3args args{};
      args.file = fh;
      args.offset = 0;
      args.count = 4096;
      rc = rpc_nfs3_read_async(c.rpc, on_reply, &args, raw);
    }
  }
  if (rc != 0) return false;
  call.release();  // the callback owns it now
  ++c.issued;
  ++c.in_flight;
  return true;
}

TEST(Concurrency, SixtyFourConnectionsSixteenInFlightAllAnswersRight) {
  INTEG_REQUIRE_GATEWAY();
  const std::string dir_name = "concurrency";
  std::string on_disk = shared_origin().export_dir() + "/" + dir_name;
  make_dirs(on_disk);
  for (int i = 0; i < kFiles; ++i) std::ofstream(on_disk + "/file_" + std::to_string(i)) << content_of(i);

  // Expected answers: handles through the gateway, fileids from the origin.
  auto g_root = mount_root(gateway_mount_port(), gateway_export_path());
  ASSERT_TRUE(g_root.transport_ok && g_root.status == 0) << g_root.error;
  auto o_root = mount_root(shared_origin().mount_port(), shared_origin().export_dir());
  ASSERT_TRUE(o_root.transport_ok && o_root.status == 0) << o_root.error;
  RawNfsConnection g, o;
  ASSERT_TRUE(g.connect(gateway_port(), kNfsProgram, 3));
  ASSERT_TRUE(o.connect(shared_origin().nfs_port(), kNfsProgram, 3));
  auto g_dir = g.lookup(g_root.root, dir_name);
  auto o_dir = o.lookup(o_root.root, dir_name);
  ASSERT_EQ(g_dir.status, 0u) << g_dir.error;
  ASSERT_EQ(o_dir.status, 0u) << o_dir.error;
  std::vector<Expected> files(kFiles);
  for (int i = 0; i < kFiles; ++i) {
    auto gl = g.lookup(g_dir.handle, "file_" + std::to_string(i));
    auto ol = o.lookup(o_dir.handle, "file_" + std::to_string(i));
    ASSERT_EQ(gl.status, 0u) << i;
    ASSERT_EQ(ol.status, 0u) << i;
    files[i] = {gl.handle, ol.fileid, content_of(i)};
  }

  Stats stats;
  std::vector<Conn> conns(kConnections);
  auto on_connect = [](rpc_context*, int status, void*, void* priv) {
    auto* c = static_cast<Conn*>(priv);
    c->connected = status == RPC_STATUS_SUCCESS;
    c->dead = !c->connected;
  };
  for (int i = 0; i < kConnections; ++i) {
    conns[i].index = i;
    conns[i].rpc = rpc_init_context();
    ASSERT_NE(conns[i].rpc, nullptr);
    conns[i].files = &files;
    conns[i].dir = g_dir.handle;
    conns[i].stats = &stats;
    ASSERT_EQ(rpc_connect_port_async(conns[i].rpc, "127.0.0.1", gateway_port(), kNfsProgram, 3, on_connect, &conns[i]), 0);
  }

  const int total = kConnections * kCallsPerConnection;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::vector<pollfd> pfds(kConnections);
  while (stats.answered < total && std::chrono::steady_clock::now() < deadline) {
    for (auto& c : conns) {
      while (c.connected && !c.dead && c.in_flight < kInFlight && c.issued < kCallsPerConnection) {
        if (!issue(c)) {
          c.dead = true;
          stats.fail("conn " + std::to_string(c.index) + ": could not queue a call");
        }
      }
    }
    bool any_alive = false;
    for (int i = 0; i < kConnections; ++i) {
      pfds[i] = {rpc_get_fd(conns[i].rpc), static_cast<short>(rpc_which_events(conns[i].rpc)), 0};
      if (conns[i].dead) pfds[i].fd = -1;
      else any_alive = true;
    }
    if (!any_alive) break;
    if (::poll(pfds.data(), pfds.size(), 100) < 0) break;
    for (int i = 0; i < kConnections; ++i) {
      if (conns[i].dead || pfds[i].fd < 0) continue;
      if (rpc_service(conns[i].rpc, pfds[i].revents) < 0) {
        conns[i].dead = true;
        stats.fail("conn " + std::to_string(i) + " failed: " + rpc_get_error(conns[i].rpc));
      }
    }
  }
  const int answered = stats.answered, wrong = stats.wrong;
  std::string sample;
  for (const auto& f : stats.failures) sample += "  " + f + "\n";
  // Destroying a context runs the callbacks of calls still pending (as failures),
  // which frees them; they do not count.
  for (auto& c : conns) rpc_destroy_context(c.rpc);

  EXPECT_EQ(answered, total) << "replies lost or deadline passed";
  EXPECT_EQ(wrong, 0) << "wrong or failed replies, first ones:\n" << sample;
}

}  // namespace
