#include "tools/nfsgw-bench/working_set.h"

#include "tools/nfsgw-bench/call_stats.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace nfsgw::bench {
namespace {

constexpr std::uint32_t kDirMode = 0755;
constexpr std::uint32_t kFileMode = 0644;
constexpr std::uint32_t kWriteChunk = 64 * 1024;
constexpr std::uint32_t kNfs3ErrExist = 17;

using Content = std::shared_ptr<const std::vector<std::uint8_t>>;

std::string numbered(const char* prefix, unsigned i, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%0*u", prefix, width, i);
  return buf;
}

void write_local(const std::filesystem::path& p, const std::vector<std::uint8_t>& content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(content.data()), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

void make_local_dir(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::create_directories(p, ec);
  if (ec) throw std::runtime_error("cannot create " + p.string() + ": " + ec.message());
}

/// Writes content into fh in chunks, one call after the other, then done().
void write_chunks(Connection& c, TaskQueue* q, FileHandle fh, Content content, std::uint64_t off,
                  std::string name, std::function<void()> done) {
  if (off >= content->size()) return done();
  auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kWriteChunk, content->size() - off));
  bool ok = c.write(fh, off, content->data() + off, n, false,
                    [&c, q, fh, content, off, name, done](const Reply& r) {
                      if (!r.ok() || r.count == 0) {
                        q->fail("setup: WRITE " + name + " failed: " +
                                (r.transport_error.empty() ? nfs3_status_name(r.status) : r.transport_error));
                        return done();
                      }
                      write_chunks(c, q, fh, content, off + r.count, name, done);
                    });
  if (!ok) {
    q->fail("setup: could not queue WRITE " + name);
    done();
  }
}

void push_file(TaskQueue& q, std::shared_ptr<FileHandle> dir, std::string name, Content content) {
  TaskQueue* qp = &q;
  q.push([qp, dir, name, content](Connection& c, std::function<void()> done) {
    return c.create(*dir, name, kFileMode, [&c, qp, name, content, done](const Reply& r) {
      if (!r.ok() || r.fh.empty()) {
        qp->fail("setup: CREATE " + name + " failed: " +
                 (r.transport_error.empty() ? nfs3_status_name(r.status) : r.transport_error));
        return done();
      }
      write_chunks(c, qp, r.fh, content, 0, name, done);
    });
  });
}

/// MKDIR parent/name (EXIST is fine: then LOOKUP it), then then(handle).
void push_dir(TaskQueue& q, std::shared_ptr<FileHandle> parent, std::string name,
              std::function<void(std::shared_ptr<FileHandle>)> then) {
  TaskQueue* qp = &q;
  q.push([qp, parent, name, then](Connection& c, std::function<void()> done) {
    return c.mkdir(*parent, name, kDirMode, [&c, qp, parent, name, then, done](const Reply& r) {
      if (r.ok() && !r.fh.empty()) {
        then(std::make_shared<FileHandle>(r.fh));
        return done();
      }
      if (!r.transport_error.empty() || (r.status != 0 && r.status != kNfs3ErrExist)) {
        qp->fail("setup: MKDIR " + name + " failed: " +
                 (r.transport_error.empty() ? nfs3_status_name(r.status) : r.transport_error));
        return done();
      }
      bool ok = c.lookup(*parent, name, [qp, name, then, done](const Reply& l) {
        if (!l.ok() || l.fh.empty())
          qp->fail("setup: LOOKUP " + name + " failed: " +
                   (l.transport_error.empty() ? nfs3_status_name(l.status) : l.transport_error));
        else
          then(std::make_shared<FileHandle>(l.fh));
        done();
      });
      if (!ok) {
        qp->fail("setup: could not queue LOOKUP " + name);
        done();
      }
    });
  });
}

}  // namespace

std::string file_name(unsigned i) { return numbered("f", i, 6); }
std::string missing_name(unsigned i) { return numbered("nx", i, 6); }
std::string churn_name(std::uint64_t tag, unsigned thread, std::uint64_t n) {
  return "cr" + std::to_string(tag) + "-" + std::to_string(thread) + "-" + std::to_string(n);
}

std::vector<std::uint8_t> file_content(std::uint32_t size) {
  std::vector<std::uint8_t> v(size);
  for (std::uint32_t i = 0; i < size; ++i) v[i] = (i % 64 == 63) ? '\n' : static_cast<std::uint8_t>('a' + i % 26);
  return v;
}

void prepare_local(const std::string& base, const Options& o) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(base) / o.dir;
  make_local_dir(dir);
  auto content = file_content(o.size);
  for (unsigned i = 0; i < o.files; ++i) write_local(dir / file_name(i), content);
  for (unsigned d = 0; d < kTreeDirs; ++d) {
    fs::path td = dir / "tree" / (numbered("d", d, 1));
    make_local_dir(td / "sub");
    for (unsigned f = 0; f < kTreeFiles; ++f) write_local(td / numbered("t", f, 2), content);
    for (unsigned f = 0; f < kSubFiles; ++f) write_local(td / "sub" / (numbered("s", f, 1)), content);
  }
}

void push_setup_tasks(TaskQueue& q, const FileHandle& root, const Options& o, FileHandle* dir_fh) {
  Content content = std::make_shared<const std::vector<std::uint8_t>>(file_content(o.size));
  TaskQueue* qp = &q;
  unsigned files = o.files;
  push_dir(q, std::make_shared<FileHandle>(root), o.dir, [qp, files, content, dir_fh](auto dir) {
    *dir_fh = *dir;
    for (unsigned i = 0; i < files; ++i) push_file(*qp, dir, file_name(i), content);
    push_dir(*qp, dir, "tree", [qp, content](auto tree) {
      for (unsigned d = 0; d < kTreeDirs; ++d) {
        push_dir(*qp, tree, numbered("d", d, 1), [qp, content](auto td) {
          for (unsigned f = 0; f < kTreeFiles; ++f) push_file(*qp, td, numbered("t", f, 2), content);
          push_dir(*qp, td, "sub", [qp, content](auto sub) {
            for (unsigned f = 0; f < kSubFiles; ++f) push_file(*qp, sub, numbered("s", f, 1), content);
          });
        });
      }
    });
  });
}

void push_resolve_tasks(TaskQueue& q, const FileHandle& dir, unsigned files,
                        std::vector<FileHandle>* fhs) {
  fhs->assign(files, FileHandle{});
  auto dirp = std::make_shared<FileHandle>(dir);
  TaskQueue* qp = &q;
  for (unsigned i = 0; i < files; ++i) {
    q.push([qp, dirp, fhs, i](Connection& c, std::function<void()> done) {
      std::string name = file_name(i);
      return c.lookup(*dirp, name, [qp, fhs, i, name, done](const Reply& r) {
        if (r.ok() && !r.fh.empty())
          (*fhs)[i] = r.fh;
        else
          qp->fail("LOOKUP " + name + " in the working folder failed (" +
                   (r.transport_error.empty() ? nfs3_status_name(r.status) : r.transport_error) +
                   "); create the working set with --setup or --prepare-local");
        done();
      });
    });
  }
}

}  // namespace nfsgw::bench
