// An LD_PRELOAD shim that lets a test simulate a power loss of nfsgw's machine for
// one directory (the dirty log's, <cache dir>/dirty): it watches the calls that
// decide what of that directory a power loss keeps, and writes after each one a
// record of it to a side file. A test kills nfsgw with -9, then applies the record
// (write_back_test.cpp: apply_power_loss) and restarts nfsgw on what is left.
//
// The model (POSIX's promises, nothing more):
//   - a file's bytes survive up to the largest size it had when an fsync or
//     fdatasync of it began and returned (bytes written later may be lost, in part
//     or in whole); an ftruncate below that size lowers it;
//   - a file's creation survives once an fsync of its directory began after it and
//     returned; the same for its removal (until then the file may come back, with
//     its durable bytes: the shim keeps a hard link to it, <record>.keep/<name>);
//   - the directory's own creation survives once an fsync of its parent began after
//     it and returned.
// Anything else done to the directory's files (rename, O_SYNC/O_DSYNC/O_DIRECT
// opens, sync_file_range, syncfs/sync) is not modelled: it is named on an
// "unmodelled" line of the record, and the test fails on it, so that a change of
// the dirty log's way of writing is noticed rather than simulated wrongly.
//
// Environment: NFSGW_POWER_LOSS_DIR the watched directory (absolute, as the program
// names it), NFSGW_POWER_LOSS_RECORD the side file. Without them the shim only
// passes calls on.
//
// Record (text, rewritten whole under a temporary name and renamed over, so a kill
// leaves the previous or the new one; it is updated before the watched call returns,
// so nothing the program did after a sync is missing from it):
//   dir <0|1>                       the directory's creation is durable
//   file <name> <durable bytes> <name durable 0|1> <live|removed>
//   unmodelled <what>
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define PL_MAX_FILES 4096
#define PL_MAX_FDS 65536
#define PL_NAME 128

enum { PL_NONE = 0, PL_FILE = 1, PL_DIR = 2, PL_PARENT = 3 };
enum { PL_LIVE = 0, PL_REMOVED = 1, PL_GONE = 2 };

struct pl_file {
  char name[PL_NAME];
  uint64_t durable;
  int name_durable;
  int state;
  uint64_t gen;  // the event (create, removal) not yet made durable
};

static pthread_mutex_t pl_mu = PTHREAD_MUTEX_INITIALIZER;
static int pl_active;
static char pl_dir[PATH_MAX], pl_parent[PATH_MAX], pl_record[PATH_MAX], pl_keep[PATH_MAX];
static struct pl_file pl_files[PL_MAX_FILES];
static int pl_nfiles;
static int pl_fd_kind[PL_MAX_FDS];
static int pl_fd_file[PL_MAX_FDS];
static uint64_t pl_gen;
static int pl_dir_durable = 1;
static uint64_t pl_dir_gen;
static char pl_unmodelled[8][128];
static int pl_nunmodelled;

static int (*real_open)(const char*, int, ...);
static int (*real_openat)(int, const char*, int, ...);
static int (*real_close)(int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_unlink)(const char*);
static int (*real_unlinkat)(int, const char*, int);
static int (*real_rename)(const char*, const char*);
static int (*real_renameat)(int, const char*, int, const char*);
static int (*real_renameat2)(int, const char*, int, const char*, unsigned);
static int (*real_mkdir)(const char*, mode_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_sync_file_range)(int, off64_t, off64_t, unsigned);
static int (*real_syncfs)(int);
static void (*real_sync)(void);

static void pl_resolve(void) {
  if (real_open) return;
  real_openat = (int (*)(int, const char*, int, ...))dlsym(RTLD_NEXT, "openat");
  real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
  real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  real_unlink = (int (*)(const char*))dlsym(RTLD_NEXT, "unlink");
  real_unlinkat = (int (*)(int, const char*, int))dlsym(RTLD_NEXT, "unlinkat");
  real_rename = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
  real_renameat = (int (*)(int, const char*, int, const char*))dlsym(RTLD_NEXT, "renameat");
  real_renameat2 = (int (*)(int, const char*, int, const char*, unsigned))dlsym(RTLD_NEXT, "renameat2");
  real_mkdir = (int (*)(const char*, mode_t))dlsym(RTLD_NEXT, "mkdir");
  real_ftruncate = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
  real_sync_file_range = (int (*)(int, off64_t, off64_t, unsigned))dlsym(RTLD_NEXT, "sync_file_range");
  real_syncfs = (int (*)(int))dlsym(RTLD_NEXT, "syncfs");
  real_sync = (void (*)(void))dlsym(RTLD_NEXT, "sync");
  real_open = (int (*)(const char*, int, ...))dlsym(RTLD_NEXT, "open");
}

/// `in` without repeated or trailing slashes.
static void pl_normalize(const char* in, char* out, size_t n) {
  size_t o = 0;
  for (size_t i = 0; in[i] && o + 1 < n; ++i) {
    if (in[i] == '/' && o > 0 && out[o - 1] == '/') continue;
    out[o++] = in[i];
  }
  while (o > 1 && out[o - 1] == '/') --o;
  out[o] = '\0';
}

/// The name of `path` when it is directly in the watched directory, else NULL.
static const char* pl_name_in_dir(const char* path, char* buf, size_t n) {
  if (!pl_active || path == NULL || path[0] != '/') return NULL;
  pl_normalize(path, buf, n);
  const size_t d = strlen(pl_dir);
  if (strncmp(buf, pl_dir, d) != 0 || buf[d] != '/') return NULL;
  const char* name = buf + d + 1;
  if (*name == '\0' || strchr(name, '/') != NULL || strlen(name) >= PL_NAME) return NULL;
  return name;
}

static int pl_is(const char* path, const char* what) {
  if (!pl_active || path == NULL) return 0;
  char buf[PATH_MAX];
  pl_normalize(path, buf, sizeof buf);
  return strcmp(buf, what) == 0;
}

static int pl_find_live(const char* name) {
  for (int i = pl_nfiles - 1; i >= 0; --i)
    if (pl_files[i].state == PL_LIVE && strcmp(pl_files[i].name, name) == 0) return i;
  return -1;
}

static int pl_add(const char* name, uint64_t durable, int name_durable, uint64_t gen) {
  if (pl_nfiles >= PL_MAX_FILES) abort();  // far more files than the log ever makes
  struct pl_file* f = &pl_files[pl_nfiles];
  snprintf(f->name, sizeof f->name, "%s", name);
  f->durable = durable;
  f->name_durable = name_durable;
  f->state = PL_LIVE;
  f->gen = gen;
  return pl_nfiles++;
}

static void pl_note_unmodelled(const char* what) {
  for (int i = 0; i < pl_nunmodelled; ++i)
    if (strcmp(pl_unmodelled[i], what) == 0) return;
  if (pl_nunmodelled < 8) snprintf(pl_unmodelled[pl_nunmodelled++], sizeof pl_unmodelled[0], "%s", what);
}

/// Rewrites the record (pl_mu held).
static void pl_write_record(void) {
  char tmp[PATH_MAX + 8];
  snprintf(tmp, sizeof tmp, "%s.tmp", pl_record);
  const int fd = real_openat(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) abort();  // the record is the test's only view: without it, stop
  char line[PL_NAME + 96];
  int n = snprintf(line, sizeof line, "dir %d\n", pl_dir_durable);
  if (write(fd, line, (size_t)n) != n) abort();
  for (int i = 0; i < pl_nfiles; ++i) {
    const struct pl_file* f = &pl_files[i];
    if (f->state == PL_GONE) continue;
    n = snprintf(line, sizeof line, "file %s %llu %d %s\n", f->name, (unsigned long long)f->durable, f->name_durable,
                 f->state == PL_LIVE ? "live" : "removed");
    if (write(fd, line, (size_t)n) != n) abort();
  }
  for (int i = 0; i < pl_nunmodelled; ++i) {
    n = snprintf(line, sizeof line, "unmodelled %s\n", pl_unmodelled[i]);
    if (write(fd, line, (size_t)n) != n) abort();
  }
  real_close(fd);
  if (real_rename(tmp, pl_record) != 0) abort();
}

__attribute__((constructor)) static void pl_init(void) {
  pl_resolve();
  const char* dir = getenv("NFSGW_POWER_LOSS_DIR");
  const char* record = getenv("NFSGW_POWER_LOSS_RECORD");
  if (dir == NULL || record == NULL || dir[0] != '/') return;
  pl_normalize(dir, pl_dir, sizeof pl_dir);
  snprintf(pl_parent, sizeof pl_parent, "%s", pl_dir);
  char* slash = strrchr(pl_parent, '/');
  if (slash == pl_parent) slash[1] = '\0';
  else if (slash) *slash = '\0';
  snprintf(pl_record, sizeof pl_record, "%s", record);
  snprintf(pl_keep, sizeof pl_keep, "%s.keep", record);
  real_mkdir(pl_keep, 0700);
  // What is there already is what the last power loss (or orderly stop) left.
  DIR* d = opendir(pl_dir);
  if (!d) pl_dir_durable = 0;  // not there yet: whoever makes it must make it durable
  if (d) {
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.' || strlen(e->d_name) >= PL_NAME) continue;
      char path[PATH_MAX + PL_NAME];
      snprintf(path, sizeof path, "%s/%s", pl_dir, e->d_name);
      struct stat st;
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) pl_add(e->d_name, (uint64_t)st.st_size, 1, 0);
    }
    closedir(d);
  }
  pl_active = 1;
  pthread_mutex_lock(&pl_mu);
  pl_write_record();
  pthread_mutex_unlock(&pl_mu);
}

static void pl_opened(const char* path, int flags, int existed, int fd) {
  if (fd < 0 || fd >= PL_MAX_FDS) return;
  char buf[PATH_MAX];
  const char* name = pl_name_in_dir(path, buf, sizeof buf);
  pthread_mutex_lock(&pl_mu);
  pl_fd_kind[fd] = PL_NONE;
  if (name) {
    if (flags & (O_SYNC | O_DSYNC)) pl_note_unmodelled("open with O_SYNC or O_DSYNC");
    if (flags & O_DIRECT) pl_note_unmodelled("open with O_DIRECT");
    int i = pl_find_live(name);
    if (i < 0) {
      // A new file: neither its name nor a byte of it is durable yet. (One that
      // existed unknown to the shim cannot be: every file there was found at start.)
      i = pl_add(name, 0, existed, existed ? 0 : ++pl_gen);
      pl_write_record();
    }
    pl_fd_kind[fd] = PL_FILE;
    pl_fd_file[fd] = i;
  } else if (pl_is(path, pl_dir)) {
    pl_fd_kind[fd] = PL_DIR;
  } else if (pl_is(path, pl_parent)) {
    pl_fd_kind[fd] = PL_PARENT;
  }
  pthread_mutex_unlock(&pl_mu);
}

static int pl_exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static int pl_open_common(int dirfd, const char* path, int flags, mode_t mode) {
  pl_resolve();
  int existed = 1;
  if (pl_active && (flags & O_CREAT) && path && path[0] == '/') existed = pl_exists(path);
  const int fd = real_openat(dirfd, path, flags, mode);
  if (pl_active && fd >= 0 && (dirfd == AT_FDCWD || (path && path[0] == '/'))) pl_opened(path, flags, existed, fd);
  return fd;
}

static mode_t pl_mode(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = pl_mode(flags, ap);
  va_end(ap);
  return pl_open_common(AT_FDCWD, path, flags, mode);
}
int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = pl_mode(flags, ap);
  va_end(ap);
  return pl_open_common(AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = pl_mode(flags, ap);
  va_end(ap);
  return pl_open_common(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = pl_mode(flags, ap);
  va_end(ap);
  return pl_open_common(dirfd, path, flags, mode);
}
int __open_2(const char* path, int flags) { return pl_open_common(AT_FDCWD, path, flags, 0); }
int __open64_2(const char* path, int flags) { return pl_open_common(AT_FDCWD, path, flags, 0); }
int __openat_2(int dirfd, const char* path, int flags) { return pl_open_common(dirfd, path, flags, 0); }
int __openat64_2(int dirfd, const char* path, int flags) { return pl_open_common(dirfd, path, flags, 0); }

int close(int fd) {
  pl_resolve();
  if (pl_active && fd >= 0 && fd < PL_MAX_FDS && pl_fd_kind[fd] != PL_NONE) {
    pthread_mutex_lock(&pl_mu);
    pl_fd_kind[fd] = PL_NONE;
    pthread_mutex_unlock(&pl_mu);
  }
  return real_close(fd);
}

static int pl_sync(int fd, int (*real)(int)) {
  pl_resolve();
  if (!pl_active || fd < 0 || fd >= PL_MAX_FDS) return real(fd);
  pthread_mutex_lock(&pl_mu);
  const int kind = pl_fd_kind[fd];
  const int file = pl_fd_file[fd];
  const uint64_t gen = pl_gen;
  pthread_mutex_unlock(&pl_mu);
  if (kind == PL_NONE) return real(fd);
  // What the sync covers is decided as it begins: the size now, the events so far.
  struct stat st;
  if (kind == PL_FILE && fstat(fd, &st) != 0) return real(fd);
  const int rc = real(fd);
  if (rc != 0) return rc;
  const int saved = errno;
  pthread_mutex_lock(&pl_mu);
  if (kind == PL_FILE) {
    // Two syncs of one file at once may return in either order: the larger size
    // is durable (only ftruncate makes a file shorter, below).
    if ((uint64_t)st.st_size > pl_files[file].durable) pl_files[file].durable = (uint64_t)st.st_size;
  } else if (kind == PL_DIR) {
    for (int i = 0; i < pl_nfiles; ++i) {
      struct pl_file* f = &pl_files[i];
      if (f->gen > gen) continue;
      if (f->state == PL_LIVE) f->name_durable = 1;
      if (f->state == PL_REMOVED) f->state = PL_GONE;
    }
  } else if (kind == PL_PARENT) {
    if (pl_dir_gen <= gen) pl_dir_durable = 1;
  }
  pl_write_record();
  // The copies of files whose removal is durable now go, once the record no longer
  // names them (a kill in between leaves a copy no one needs, never a record
  // naming a copy that is gone).
  if (kind == PL_DIR) {
    for (int i = 0; i < pl_nfiles; ++i) {
      struct pl_file* f = &pl_files[i];
      if (f->state != PL_GONE || f->name[0] == '\0') continue;
      char keep[PATH_MAX + PL_NAME];
      snprintf(keep, sizeof keep, "%s/%s", pl_keep, f->name);
      real_unlink(keep);
      f->name[0] = '\0';  // done with: never looked up again
    }
  }
  pthread_mutex_unlock(&pl_mu);
  errno = saved;
  return rc;
}

int fsync(int fd) { return pl_sync(fd, real_fsync ? real_fsync : (pl_resolve(), real_fsync)); }
int fdatasync(int fd) { return pl_sync(fd, real_fdatasync ? real_fdatasync : (pl_resolve(), real_fdatasync)); }

static int pl_truncate_common(int fd, off_t length, int rc) {
  if (rc == 0 && pl_active && fd >= 0 && fd < PL_MAX_FDS && pl_fd_kind[fd] == PL_FILE) {
    const int saved = errno;
    pthread_mutex_lock(&pl_mu);
    // The bytes past it are gone whatever a power loss does next.
    struct pl_file* f = &pl_files[pl_fd_file[fd]];
    if ((uint64_t)length < f->durable) f->durable = (uint64_t)length;
    pl_write_record();
    pthread_mutex_unlock(&pl_mu);
    errno = saved;
  }
  return rc;
}

int ftruncate(int fd, off_t length) {
  pl_resolve();
  return pl_truncate_common(fd, length, real_ftruncate(fd, length));
}
int ftruncate64(int fd, off64_t length) {
  pl_resolve();
  return pl_truncate_common(fd, (off_t)length, real_ftruncate(fd, (off_t)length));
}

/// unlink or unlinkat (`at`) of `path` in the watched directory.
static int pl_unlink_common(int at, int dirfd, const char* path, int flags) {
  char buf[PATH_MAX];
  const char* name = pl_name_in_dir(path, buf, sizeof buf);
  pthread_mutex_lock(&pl_mu);
  const int i = pl_find_live(name);
  char keep[PATH_MAX + PL_NAME];
  snprintf(keep, sizeof keep, "%s/%s", pl_keep, name);
  // The file may come back after a power loss until the directory is synced: a
  // hard link keeps its bytes for that.
  if (i >= 0 && pl_files[i].name_durable) {
    real_unlink(keep);
    (void)link(buf, keep);
  }
  const int rc = at ? real_unlinkat(dirfd, path, flags) : real_unlink(path);
  const int saved = errno;
  if (rc == 0 && i >= 0) {
    pl_files[i].state = pl_files[i].name_durable ? PL_REMOVED : PL_GONE;
    pl_files[i].gen = ++pl_gen;
    pl_write_record();
  } else if (rc != 0 && i >= 0) {
    real_unlink(keep);
  }
  pthread_mutex_unlock(&pl_mu);
  errno = saved;
  return rc;
}

int unlink(const char* path) {
  pl_resolve();
  char buf[PATH_MAX];
  if (!pl_name_in_dir(path, buf, sizeof buf)) return real_unlink(path);
  return pl_unlink_common(0, AT_FDCWD, path, 0);
}

int unlinkat(int dirfd, const char* path, int flags) {
  pl_resolve();
  char buf[PATH_MAX];
  if (!(dirfd == AT_FDCWD || path[0] == '/') || !pl_name_in_dir(path, buf, sizeof buf))
    return real_unlinkat(dirfd, path, flags);
  return pl_unlink_common(1, dirfd, path, flags);
}

static void pl_rename_check(const char* a, const char* b) {
  char x[PATH_MAX], y[PATH_MAX];
  if (pl_name_in_dir(a, x, sizeof x) || pl_name_in_dir(b, y, sizeof y)) {
    pthread_mutex_lock(&pl_mu);
    pl_note_unmodelled("rename");
    pl_write_record();
    pthread_mutex_unlock(&pl_mu);
  }
}

int rename(const char* a, const char* b) {
  pl_resolve();
  if (pl_active) pl_rename_check(a, b);
  return real_rename(a, b);
}
int renameat(int fa, const char* a, int fb, const char* b) {
  pl_resolve();
  if (pl_active) pl_rename_check(a, b);
  return real_renameat(fa, a, fb, b);
}
int renameat2(int fa, const char* a, int fb, const char* b, unsigned flags) {
  pl_resolve();
  if (pl_active) pl_rename_check(a, b);
  return real_renameat2(fa, a, fb, b, flags);
}

int mkdir(const char* path, mode_t mode) {
  pl_resolve();
  const int rc = real_mkdir(path, mode);
  if (rc == 0 && pl_is(path, pl_dir)) {
    pthread_mutex_lock(&pl_mu);
    pl_dir_durable = 0;
    pl_dir_gen = ++pl_gen;
    pl_write_record();
    pthread_mutex_unlock(&pl_mu);
  }
  return rc;
}

int sync_file_range(int fd, off64_t offset, off64_t n, unsigned flags) {
  pl_resolve();
  if (pl_active && fd >= 0 && fd < PL_MAX_FDS && pl_fd_kind[fd] == PL_FILE) {
    pthread_mutex_lock(&pl_mu);
    pl_note_unmodelled("sync_file_range");
    pl_write_record();
    pthread_mutex_unlock(&pl_mu);
  }
  return real_sync_file_range(fd, offset, n, flags);
}

int syncfs(int fd) {
  pl_resolve();
  if (pl_active && fd >= 0 && fd < PL_MAX_FDS && pl_fd_kind[fd] != PL_NONE) {
    pthread_mutex_lock(&pl_mu);
    pl_note_unmodelled("syncfs");
    pl_write_record();
    pthread_mutex_unlock(&pl_mu);
  }
  return real_syncfs(fd);
}

void sync(void) {
  pl_resolve();
  if (pl_active) {
    pthread_mutex_lock(&pl_mu);
    pl_note_unmodelled("sync");
    pl_write_record();
    pthread_mutex_unlock(&pl_mu);
  }
  real_sync();
}
