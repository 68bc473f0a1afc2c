#include "tools/nfsgw-bench/bench_runner.h"

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#include "tools/nfsgw-bench/call_stats.h"
#include "tools/nfsgw-bench/event_loop.h"
#include "tools/nfsgw-bench/load_driver.h"
#include "tools/nfsgw-bench/load_workloads.h"
#include "tools/nfsgw-bench/lock_workload.h"
#include "tools/nfsgw-bench/nfs_url.h"
#include "tools/nfsgw-bench/report.h"
#include "tools/nfsgw-bench/task_queue.h"
#include "tools/nfsgw-bench/walk_workload.h"
#include "tools/nfsgw-bench/working_set.h"
#include "tools/nfsgw-bench/write_workloads.h"

namespace nfsgw::bench {
namespace {

using Conns = std::vector<std::unique_ptr<Connection>>;

std::vector<Connection*> raw(const Conns& conns) {
  std::vector<Connection*> out;
  for (const auto& c : conns) out.push_back(c.get());
  return out;
}

std::string where(const std::string& host, std::uint16_t port, const char* what) {
  return std::string(what) + " at " + host + ":" + (port ? std::to_string(port) : std::string("<rpcbind>"));
}

std::string reply_error(const Reply& r) {
  return r.transport_error.empty() ? nfs3_status_name(r.status) : r.transport_error;
}

/// Connects every connection, all within one deadline.
bool connect_all(const Conns& conns, const std::string& host, std::uint16_t port, Program prog,
                 Clock::time_point deadline, double timeout_s, std::string& error) {
  const char* what = prog == Program::Mount ? "MOUNT service" : "NFS service";
  for (const auto& c : conns) {
    if (!c->start_connect(host, port, prog)) {
      error = "cannot connect to " + where(host, port, what) + ": " + c->error();
      return false;
    }
  }
  auto all = raw(conns);
  auto r = poll_until(all, [&] {
    return std::all_of(conns.begin(), conns.end(), [](const auto& c) { return c->connected() || c->failed(); });
  }, deadline);
  std::string failed = first_connection_error(all);
  if (!failed.empty()) {
    error = "cannot connect to " + where(host, port, what) + ": " + failed;
    return false;
  }
  if (r != LoopResult::Done) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", timeout_s);
    // libnfs pings the program (NULL call) as part of connecting, so a socket
    // that accepts but never answers also ends here.
    error = std::string("no answer within ") + secs + " s from " + where(host, port, what) +
            " (connect and NULL ping)";
    return false;
  }
  return true;
}

/// One call, waited for within the deadline.
bool call_and_wait(Connection& c, const std::function<bool(Connection&, ReplyFn)>& issue,
                   Clock::time_point deadline, Reply& out, std::string& error) {
  bool got = false;
  if (!issue(c, [&](const Reply& r) {
        out = r;
        got = true;
      })) {
    error = "libnfs refused to queue the call";
    return false;
  }
  std::vector<Connection*> one{&c};
  auto r = poll_until(one, [&] { return got; }, deadline);
  if (r == LoopResult::ConnectionFailed) {
    error = "connection failed: " + c.error();
    return false;
  }
  if (!got) {
    error = "no reply before the timeout";
    return false;
  }
  return true;
}

/// Runs a finite task queue over all connections of this thread.
bool run_queue(const Conns& conns, TaskQueue& q, const Options& o, const char* what, std::ostream& err) {
  CallStats phase;
  for (const auto& c : conns) c->set_stats(&phase);
  DriveLimits limits;
  limits.stop_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(kMaxDurationS));
  limits.drain_timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  limits.inflight = o.inflight;
  DriveResult r = drive(raw(conns), q, phase, limits);
  for (const auto& c : conns) c->set_stats(nullptr);
  if (!r.ok || !r.ran_dry) {
    err << "nfsgw-bench: " << what << " failed: " << (r.error.empty() ? "did not finish in time" : r.error)
        << "\n";
    return false;
  }
  err << "nfsgw-bench: " << what << ": " << phase.calls << " calls in " << r.seconds() << " s\n";
  return true;
}

}  // namespace

int run_bench(const Options& o, std::ostream& out, std::ostream& err) {
  if (!o.prepare_local.empty()) {
    try {
      prepare_local(o.prepare_local, o);
    } catch (const std::exception& e) {
      err << "nfsgw-bench: " << e.what() << "\n";
      return 1;
    }
    err << "nfsgw-bench: wrote " << o.files << " files of " << o.size << " B and the walk tree under "
        << o.prepare_local << "/" << o.dir << "\n";
    return 0;
  }
  NfsUrl url;
  try {
    url = parse_nfs_url(o.url);
  } catch (const std::exception& e) {
    err << "nfsgw-bench: " << e.what() << "\n";
    return 2;
  }
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_s));
  std::string error;

  // MNT for the root handle, on its own short-lived connection.
  FileHandle root;
  {
    Conns mount;
    mount.push_back(std::make_unique<Connection>(o.uid, o.gid));
    if (!connect_all(mount, url.host, url.mount_port, Program::Mount, Clock::now() + timeout, o.timeout_s, error)) {
      err << "nfsgw-bench: " << error << "\n";
      return 1;
    }
    Reply r;
    if (!call_and_wait(*mount[0], [&](Connection& c, ReplyFn fn) { return c.mnt(url.export_path, fn); },
                       Clock::now() + timeout, r, error)) {
      err << "nfsgw-bench: MNT " << url.export_path << ": " << error << "\n";
      return 1;
    }
    if (!r.ok() || r.fh.empty()) {
      err << "nfsgw-bench: MNT " << url.export_path << " refused (MNT3 status " << r.status << ")\n";
      return 1;
    }
    root = r.fh;
  }

  Conns conns;
  for (unsigned i = 0; i < o.connections; ++i) conns.push_back(std::make_unique<Connection>(o.uid, o.gid));
  if (!connect_all(conns, url.host, url.nfs_port, Program::Nfs, Clock::now() + timeout, o.timeout_s, error)) {
    err << "nfsgw-bench: " << error << "\n";
    return 1;
  }

  RunData data;
  if (o.setup) {
    TaskQueue q;
    push_setup_tasks(q, root, o, &data.dir_fh);
    if (!run_queue(conns, q, o, "setup", err)) return 1;
  }
  if (data.dir_fh.empty()) {
    Reply r;
    if (!call_and_wait(*conns[0], [&](Connection& c, ReplyFn fn) { return c.lookup(root, o.dir, fn); },
                       Clock::now() + timeout, r, error)) {
      err << "nfsgw-bench: LOOKUP " << o.dir << ": " << error << "\n";
      return 1;
    }
    const bool writes = o.mode == Mode::SeqWrite || o.mode == Mode::Unpack;
    constexpr std::uint32_t kNfs3ErrNoent = 2;
    if (writes && r.transport_error.empty() && r.status == kNfs3ErrNoent) {
      // The write modes make their own folder.
      if (!call_and_wait(*conns[0], [&](Connection& c, ReplyFn fn) { return c.mkdir(root, o.dir, 0755, fn); },
                         Clock::now() + timeout, r, error)) {
        err << "nfsgw-bench: MKDIR " << o.dir << ": " << error << "\n";
        return 1;
      }
      if (!r.ok() || r.fh.empty()) {
        err << "nfsgw-bench: MKDIR " << o.dir << " under " << url.export_path << " failed ("
            << (r.ok() ? std::string("no handle") : reply_error(r)) << ")\n";
        return 1;
      }
    }
    if (!r.ok() || r.fh.empty()) {
      err << "nfsgw-bench: working folder '" << o.dir << "' not found under " << url.export_path << " ("
          << reply_error(r) << "); create it with --setup or --prepare-local\n";
      return 1;
    }
    data.dir_fh = r.fh;
  }
  if (mode_needs_handles(o.mode)) {
    TaskQueue q;
    push_resolve_tasks(q, data.dir_fh, o.files, &data.file_fhs);
    if (!run_queue(conns, q, o, "resolving file handles", err)) return 1;
  }
  if (o.mode == Mode::Locks) {
    // The handles came from NFS; the run goes to the server's NLM.
    Conns nlm;
    for (unsigned i = 0; i < o.connections; ++i) nlm.push_back(std::make_unique<Connection>(o.uid, o.gid));
    if (!connect_all(nlm, url.host, o.nlm_port, Program::Nlm, Clock::now() + timeout, o.timeout_s, error)) {
      err << "nfsgw-bench: NLM: " << error << "\n";
      return 1;
    }
    conns = std::move(nlm);
  }
  // locks: one lock held for the whole run, by an owner of its own on a byte no
  // request uses, so that this client host holds a lock at the server from start
  // to end. A server asks its status monitor at a host's first lock and after its
  // last unlock (ganesha: SM_MON and SM_UNMON to statd, which stalled it 5 s every
  // 20 pairs or so when one request at a time left the host without a lock).
  Conns pin;
  NlmLock pin_lock;
  if (o.mode == Mode::Locks) {
    pin.push_back(std::make_unique<Connection>(o.uid, o.gid));
    if (!connect_all(pin, url.host, o.nlm_port, Program::Nlm, Clock::now() + timeout, o.timeout_s, error)) {
      err << "nfsgw-bench: NLM: " << error << "\n";
      return 1;
    }
    pin_lock = NlmLock{data.file_fhs[0], "nb-pin-" + std::to_string(::getpid()),
                       static_cast<std::uint32_t>(::getpid()), 1ull << 62, 1};
    Reply r;
    if (!call_and_wait(*pin[0], [&](Connection& c, ReplyFn fn) { return c.nlm_lock(pin_lock, fn); },
                       Clock::now() + timeout, r, error) ||
        !r.ok()) {
      err << "nfsgw-bench: NLM: the held lock was not granted (" << (error.empty() ? reply_error(r) : error)
          << ")\n";
      return 1;
    }
  }
  for (unsigned i = 0; i < o.files; ++i) {
    data.file_names.push_back(file_name(i));
    data.missing_names.push_back(missing_name(i));
  }
  data.write_buf = file_content(o.size);
  data.churn_tag = static_cast<std::uint64_t>(::getpid());

  RunReport report;
  report.mode = mode_name(o.mode);
  report.connections = o.connections;
  report.inflight = o.inflight;
  report.threads = o.mode == Mode::Walk ? 1 : o.threads;

  std::atomic<std::uint64_t> issued{0};
  DriveLimits limits;
  limits.drain_timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  limits.inflight = o.inflight;
  limits.issued = &issued;
  limits.count_limit = o.count;
  limits.stop_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));

  bool ok = true;
  if (o.mode == Mode::Walk) {
    TaskQueue q;
    WalkCounters counters;
    push_walk(q, data.dir_fh, &counters);
    for (const auto& c : conns) c->set_stats(&report.stats);
    DriveResult r = drive(raw(conns), q, report.stats, limits);
    report.seconds = r.seconds();
    report.walk_entries = counters.entries;
    report.walk_dirs = counters.dirs;
    report.complete = r.ok && r.ran_dry;
    if (!r.ok) {
      err << "nfsgw-bench: walk failed: " << r.error << "\n";
      ok = false;
    } else if (!r.ran_dry) {
      err << "nfsgw-bench: walk did not finish within the duration/count limit\n";
      ok = false;
    }
  } else {
    const unsigned nthreads = report.threads;
    std::vector<Conns> per_thread(nthreads);
    for (std::size_t i = 0; i < conns.size(); ++i) per_thread[i % nthreads].push_back(std::move(conns[i]));
    std::vector<CallStats> stats(nthreads);
    std::vector<DriveResult> results(nthreads);
    std::vector<WriteCounters> written(nthreads);
    report.write_mode = o.mode == Mode::SeqWrite || o.mode == Mode::Unpack;
    auto body = [&](unsigned t) {
      auto wl = report.write_mode        ? make_write_workload(o, data, t, nthreads, &written[t])
                : o.mode == Mode::Locks ? make_lock_workload(o, data, t, nthreads)
                                        : make_load_workload(o, data, t, nthreads);
      DriveLimits mine = limits;
      // seqwrite: the unit is a whole file, one per connection; its WRITE window is
      // the workload's own.
      if (o.mode == Mode::SeqWrite) mine.inflight = 1;
      for (const auto& c : per_thread[t]) c->set_stats(&stats[t]);
      results[t] = drive(raw(per_thread[t]), *wl, stats[t], mine);
      for (const auto& c : per_thread[t]) c->set_stats(nullptr);
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < nthreads; ++t) threads.emplace_back(body, t);
    body(0);
    for (auto& th : threads) th.join();
    auto start = results[0].start, end = results[0].end;
    for (unsigned t = 0; t < nthreads; ++t) {
      report.stats.merge(stats[t]);
      start = std::min(start, results[t].start);
      end = std::max(end, results[t].end);
      if (!results[t].ok) {
        err << "nfsgw-bench: thread " << t << ": " << results[t].error << "\n";
        ok = false;
      }
    }
    report.seconds = std::chrono::duration<double>(end - start).count();
    if (report.write_mode) {
      for (const auto& w : written) {
        report.write_bytes += w.bytes;
        report.write_files += w.files;
        report.short_writes += w.short_writes;
      }
      const std::uint64_t wanted = o.mode == Mode::SeqWrite ? o.connections : o.files;
      report.complete = report.write_files == wanted;
      if (ok && !report.complete) {
        err << "nfsgw-bench: " << report.write_files << " of " << wanted
            << " files finished within the duration/count limit\n";
        ok = false;
      }
    }
  }

  if (!pin.empty()) {
    Reply r;
    if (!call_and_wait(*pin[0], [&](Connection& c, ReplyFn fn) { return c.nlm_unlock(pin_lock, fn); },
                       Clock::now() + timeout, r, error) ||
        !r.ok()) {
      err << "nfsgw-bench: NLM: the held lock was not released (" << (error.empty() ? reply_error(r) : error)
          << ")\n";
      ok = false;
    }
  }
  out << human_line(report) << "\n";
  if (o.json) out << to_json(report) << "\n";
  out.flush();
  return ok ? 0 : 1;
}

}  // namespace nfsgw::bench
