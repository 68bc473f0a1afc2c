/*
 * fstests: "basic" and "special" file system checks for an NFS mount, in the
 * spirit of the Connectathon suite's two groups (written from their list of
 * what is covered, not from its code).
 *
 *   fstests basic DIR     tree create/remove, lookups, getattr/setattr,
 *                         write+read, readdir of many entries, link+rename,
 *                         symlink+readlink, statfs
 *   fstests special DIR   silly rename (open, unlink, read), chmod 000 on an open
 *                         file, negative and large seeks, big offsets, holes,
 *                         O_EXCL, rename over an open file, truncate of an open file
 *   fstests all DIR       both
 *   fstests -C GROUP DIR  also drop the guest's page cache (/proc/sys/vm/drop_caches)
 *                         at points where a read must come from the server;
 *                         without -C (a hand run on a shared host) those reads may
 *                         come from the client's cache
 *
 * DIR must exist and be empty; each test works in its own subfolder and removes
 * it when it passes. Prints "fstests: PASS name" or "fstests: FAIL name: why"
 * per test and exits 1 when any failed. Runs as root; the chmod 000 test drops
 * to uid/gid 4242 in a child (root would pass any permission check).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char why[4096];
static const char *base;

/* Each check returns 0 or records why and returns -1. */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            int e_ = errno;                                                \
            snprintf(why, sizeof why, __VA_ARGS__);                        \
            if (e_) {                                                      \
                size_t l_ = strlen(why);                                   \
                snprintf(why + l_, sizeof why - l_, " (errno: %s)", strerror(e_)); \
            }                                                              \
            return -1;                                                     \
        }                                                                  \
    } while (0)

static char *pathf(const char *fmt, ...)
{
    static char bufs[8][1024];
    static int next;
    char *p = bufs[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p, sizeof bufs[0], fmt, ap);
    va_end(ap);
    return p;
}

/* Removes a tree (files, links, folders); returns 0 or -1. */
static int rm_tree(const char *p)
{
    struct stat st;
    if (lstat(p, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(p);
    DIR *d = opendir(p);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s", p, e->d_name);
        if (rm_tree(sub) != 0)
            rc = -1;
    }
    closedir(d);
    return rmdir(p) == 0 ? rc : -1;
}

static void fill(unsigned char *b, size_t n, uint64_t off, unsigned salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(((off + i) * 7 + salt + (off + i) / 4093) % 251);
}

static int write_all(int fd, const void *p, size_t n, off_t off)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = pwrite(fd, c, n, off);
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n, off_t off)
{
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, c + got, n - got, off + (off_t)got);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (int)got;
}

static int may_drop_caches;

static void drop_caches(void)
{
    if (!may_drop_caches)
        return;
    sync();
    int f = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (f >= 0) {
        if (write(f, "3\n", 2) != 2)
            perror("drop_caches");
        close(f);
    }
}

/* Entries in DIR whose names start with PREFIX. */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (!strncmp(e->d_name, prefix, strlen(prefix)))
            n++;
    closedir(d);
    return n;
}

/* The client removes a silly-renamed file (.nfsXXXX) after the last close,
 * asynchronously: wait up to 10 s for it to go. */
static int wait_no_silly(const char *dir)
{
    for (int i = 0; i < 100; i++) {
        if (count_prefixed(dir, ".nfs") == 0)
            return 0;
        usleep(100000);
    }
    return -1;
}

/* ---------------------------------------------------------------- basic */

enum { TREE_DEPTH = 3, TREE_FILES = 4, TREE_DIRS = 3 };

static int make_level(const char *dir, int depth, int *files, int *dirs)
{
    for (int f = 0; f < TREE_FILES; f++) {
        int fd = open(pathf("%s/file.%d", dir, f), O_CREAT | O_EXCL | O_WRONLY, 0644);
        CHECK(fd >= 0, "create %s/file.%d", dir, f);
        CHECK(close(fd) == 0, "close");
        (*files)++;
    }
    if (depth == 0)
        return 0;
    for (int d = 0; d < TREE_DIRS; d++) {
        char *sub = pathf("%s/dir.%d", dir, d);
        CHECK(mkdir(sub, 0755) == 0, "mkdir %s", sub);
        (*dirs)++;
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", sub);
        if (make_level(copy, depth - 1, files, dirs) != 0)
            return -1;
    }
    return 0;
}

static int walk_level(const char *dir, int depth, int *files, int *dirs)
{
    struct stat st;
    for (int f = 0; f < TREE_FILES; f++) {
        char *p = pathf("%s/file.%d", dir, f);
        CHECK(stat(p, &st) == 0, "stat %s", p);
        CHECK(S_ISREG(st.st_mode) && st.st_size == 0 && (st.st_mode & 07777) == 0644, "%s: mode %o size %lld", p,
              st.st_mode, (long long)st.st_size);
        (*files)++;
    }
    if (depth == 0)
        return 0;
    for (int d = 0; d < TREE_DIRS; d++) {
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/dir.%d", dir, d);
        CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode), "stat %s", sub);
        (*dirs)++;
        if (walk_level(sub, depth - 1, files, dirs) != 0)
            return -1;
    }
    return 0;
}

static int expected_tree_files(void)
{
    int n = 0, level = 1;
    for (int d = 0; d <= TREE_DEPTH; d++, level *= TREE_DIRS)
        n += level * TREE_FILES;
    return n;
}

static int basic_create_tree_then_remove_it(const char *dir)
{
    int files = 0, dirs = 0, seen_files = 0, seen_dirs = 0;
    if (make_level(dir, TREE_DEPTH, &files, &dirs) != 0)
        return -1;
    CHECK(files == expected_tree_files(), "made %d files, expected %d", files, expected_tree_files());
    if (walk_level(dir, TREE_DEPTH, &seen_files, &seen_dirs) != 0)
        return -1;
    CHECK(seen_files == files && seen_dirs == dirs, "found %d files %d dirs of %d/%d", seen_files, seen_dirs, files,
          dirs);
    /* rmdir of a non-empty folder must fail, and leave it */
    errno = 0;
    CHECK(rmdir(pathf("%s/dir.0", dir)) != 0 && (errno == ENOTEMPTY || errno == EEXIST),
          "rmdir of a non-empty folder did not fail with ENOTEMPTY");
    errno = 0;
    for (int d = 0; d < TREE_DIRS; d++)
        CHECK(rm_tree(pathf("%s/dir.%d", dir, d)) == 0, "removing dir.%d", d);
    for (int f = 0; f < TREE_FILES; f++)
        CHECK(unlink(pathf("%s/file.%d", dir, f)) == 0, "unlink file.%d", f);
    struct stat st;
    errno = 0;
    CHECK(stat(pathf("%s/dir.1/file.0", dir), &st) != 0 && errno == ENOENT, "removed file still found");
    errno = 0;
    CHECK(count_prefixed(dir, "") == 2, "folder not empty after removing the tree");
    return 0;
}

static int basic_lookups_across_folders(const char *dir)
{
    struct stat a, b, top;
    CHECK(mkdir(pathf("%s/x", dir), 0755) == 0 && mkdir(pathf("%s/x/y", dir), 0755) == 0 &&
              mkdir(pathf("%s/x/y/z", dir), 0755) == 0,
          "mkdir x/y/z");
    CHECK(stat(pathf("%s/x/y/z/../../y/./z", dir), &a) == 0 && stat(pathf("%s/x/y/z", dir), &b) == 0,
          "stat through ..");
    CHECK(a.st_ino == b.st_ino, "x/y/z/../../y/./z is inode %llu, x/y/z %llu", (unsigned long long)a.st_ino,
          (unsigned long long)b.st_ino);
    char cwd[1024], old[1024];
    CHECK(getcwd(old, sizeof old) != NULL, "getcwd");
    CHECK(chdir(pathf("%s/x/y/z", dir)) == 0, "chdir x/y/z");
    int ok = getcwd(cwd, sizeof cwd) != NULL && !strcmp(cwd, pathf("%s/x/y/z", dir));
    int up = stat("../../..", &a) == 0 && stat(dir, &top) == 0 && a.st_ino == top.st_ino;
    CHECK(chdir(old) == 0, "chdir back");
    CHECK(ok, "getcwd in x/y/z says %s", cwd);
    CHECK(up, "../../.. from x/y/z is not the test folder");
    errno = 0;
    CHECK(stat(pathf("%s/x/nope/z", dir), &a) != 0 && errno == ENOENT, "missing middle component not ENOENT");
    int fd = open(pathf("%s/x/f", dir), O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0 && close(fd) == 0, "create x/f");
    errno = 0;
    CHECK(stat(pathf("%s/x/f/y", dir), &a) != 0 && errno == ENOTDIR, "a file as a folder is not ENOTDIR");
    errno = 0;
    return 0;
}

static int basic_setattr_getattr(const char *dir)
{
    char *p = pathf("%s/attrs", dir);
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0, "create");
    CHECK(write_all(fd, "0123456789", 10, 0) == 0 && close(fd) == 0, "write");
    static const mode_t modes[] = {0, 0400, 0644, 0755, 0777, 01777, 04755, 02755, 0600};
    struct stat st;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        CHECK(chmod(p, modes[i]) == 0, "chmod %o", modes[i]);
        CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == modes[i], "mode %o after chmod %o", st.st_mode & 07777,
              modes[i]);
    }
    CHECK(chown(p, 1234, 5678) == 0, "chown");
    CHECK(stat(p, &st) == 0 && st.st_uid == 1234 && st.st_gid == 5678, "owner %u:%u after chown 1234:5678",
          st.st_uid, st.st_gid);
    struct timeval tv[2] = {{1000000000, 0}, {1234567890, 0}};
    CHECK(utimes(p, tv) == 0, "utimes");
    CHECK(stat(p, &st) == 0 && st.st_mtime == 1234567890 && st.st_atime == 1000000000, "times %lld/%lld after utimes",
          (long long)st.st_atime, (long long)st.st_mtime);
    CHECK(truncate(p, 4) == 0 && stat(p, &st) == 0 && st.st_size == 4, "size %lld after truncate 4",
          (long long)st.st_size);
    CHECK(truncate(p, 70000) == 0 && stat(p, &st) == 0 && st.st_size == 70000, "size %lld after truncate 70000",
          (long long)st.st_size);
    /* many getattrs agree with each other */
    for (int i = 0; i < 50; i++) {
        struct stat again;
        CHECK(stat(p, &again) == 0 && again.st_ino == st.st_ino && again.st_size == st.st_size &&
                  again.st_mtime == st.st_mtime,
              "stat %d disagrees", i);
    }
    return 0;
}

static int basic_write_then_read_verify(const char *dir)
{
    enum { SIZE = 1 << 20 };
    static unsigned char w[SIZE], r[SIZE];
    char *p = pathf("%s/data", dir);
    fill(w, SIZE, 0, 3);
    int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0, "create");
    /* odd chunk sizes, sequential */
    size_t off = 0, chunk = 1;
    while (off < SIZE) {
        size_t n = chunk < SIZE - off ? chunk : SIZE - off;
        CHECK(write(fd, w + off, n) == (ssize_t)n, "write %zu at %zu", n, off);
        off += n;
        chunk = chunk * 3 + 1;
        if (chunk > 70000)
            chunk = 7;
    }
    CHECK(close(fd) == 0, "close after write");
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            drop_caches(); /* the second read comes from the server */
        fd = open(p, O_RDONLY);
        CHECK(fd >= 0, "open for read");
        struct stat st;
        CHECK(fstat(fd, &st) == 0 && st.st_size == SIZE, "size %lld", (long long)st.st_size);
        memset(r, 0, SIZE);
        CHECK(read_all(fd, r, SIZE, 0) == SIZE, "short read");
        close(fd);
        if (memcmp(r, w, SIZE) != 0) {
            size_t i = 0;
            while (r[i] == w[i])
                i++;
            CHECK(0, "pass %d: data differs at offset %zu", pass, i);
        }
    }
    return 0;
}

static int basic_readdir_many_entries(const char *dir)
{
    enum { N = 300 };
    static unsigned char seen[N];
    char *d = pathf("%s/many", dir);
    CHECK(mkdir(d, 0755) == 0, "mkdir");
    char dcopy[1024];
    snprintf(dcopy, sizeof dcopy, "%s", d);
    for (int i = 0; i < N; i++) {
        int fd = open(pathf("%s/entry-with-a-longish-name-%04d", dcopy, i), O_CREAT | O_WRONLY, 0644);
        CHECK(fd >= 0 && close(fd) == 0, "create %d", i);
    }
    for (int round = 0; round < 2; round++) {
        memset(seen, 0, sizeof seen);
        DIR *dh = opendir(dcopy);
        CHECK(dh != NULL, "opendir");
        int others = 0, dots = 0;
        for (int pass = 0; pass < 2; pass++) { /* rewinddir: the same entries again */
            struct dirent *e;
            errno = 0;
            while ((e = readdir(dh)) != NULL) {
                int i;
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    dots++;
                else if (sscanf(e->d_name, "entry-with-a-longish-name-%d", &i) == 1 && i >= 0 && i < N)
                    seen[i]++;
                else
                    others++;
            }
            CHECK(errno == 0, "readdir");
            if (pass == 0)
                rewinddir(dh);
        }
        closedir(dh);
        CHECK(others == 0 && dots == 4, "round %d: %d unexpected names, %d dot entries", round, others, dots);
        for (int i = 0; i < N; i++) {
            int want = round == 0 || i % 2 ? 2 : 0;
            CHECK(seen[i] == want, "round %d: entry %d seen %d times, expected %d", round, i, seen[i], want);
        }
        if (round == 0)
            for (int i = 0; i < N; i += 2)
                CHECK(unlink(pathf("%s/entry-with-a-longish-name-%04d", dcopy, i)) == 0, "unlink %d", i);
    }
    return 0;
}

static int basic_link_and_rename(const char *dir)
{
    struct stat a, b;
    char *f = pathf("%s/orig", dir);
    int fd = open(f, O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0 && write_all(fd, "content", 7, 0) == 0 && close(fd) == 0, "create");
    CHECK(mkdir(pathf("%s/other", dir), 0755) == 0, "mkdir");
    for (int i = 0; i < 5; i++)
        CHECK(link(pathf("%s/orig", dir), pathf("%s/link%d", dir, i)) == 0, "link %d", i);
    CHECK(stat(pathf("%s/orig", dir), &a) == 0 && a.st_nlink == 6, "nlink %lu, expected 6",
          (unsigned long)a.st_nlink);
    CHECK(stat(pathf("%s/link3", dir), &b) == 0 && b.st_ino == a.st_ino && b.st_nlink == 6, "link3 differs");
    CHECK(rename(pathf("%s/link0", dir), pathf("%s/renamed", dir)) == 0, "rename in folder");
    CHECK(rename(pathf("%s/link1", dir), pathf("%s/other/moved", dir)) == 0, "rename across folders");
    errno = 0;
    CHECK(stat(pathf("%s/link0", dir), &b) != 0 && errno == ENOENT, "old name still there");
    CHECK(stat(pathf("%s/other/moved", dir), &b) == 0 && b.st_ino == a.st_ino && b.st_nlink == 6, "moved differs");
    /* rename over an existing file replaces it */
    fd = open(pathf("%s/victim", dir), O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0 && close(fd) == 0, "create victim");
    CHECK(rename(pathf("%s/renamed", dir), pathf("%s/victim", dir)) == 0, "rename over a file");
    CHECK(stat(pathf("%s/victim", dir), &b) == 0 && b.st_ino == a.st_ino, "victim not replaced");
    /* rename of a link onto another name of the same file does nothing */
    CHECK(rename(pathf("%s/link2", dir), pathf("%s/link3", dir)) == 0, "rename onto the same file");
    CHECK(stat(pathf("%s/link2", dir), &b) == 0, "link2 vanished renaming onto its own file");
    for (int i = 2; i < 5; i++)
        CHECK(unlink(pathf("%s/link%d", dir, i)) == 0, "unlink link%d", i);
    CHECK(unlink(pathf("%s/victim", dir)) == 0 && unlink(pathf("%s/other/moved", dir)) == 0, "unlink");
    CHECK(stat(pathf("%s/orig", dir), &a) == 0 && a.st_nlink == 1, "nlink %lu after unlinks, expected 1",
          (unsigned long)a.st_nlink);
    char buf[16] = {0};
    fd = open(pathf("%s/orig", dir), O_RDONLY);
    CHECK(fd >= 0 && read_all(fd, buf, sizeof buf, 0) == 7 && !memcmp(buf, "content", 7), "content after unlinks");
    close(fd);
    /* folder rename */
    CHECK(rename(pathf("%s/other", dir), pathf("%s/other2", dir)) == 0, "rename folder");
    CHECK(stat(pathf("%s/other2", dir), &b) == 0 && S_ISDIR(b.st_mode), "renamed folder");
    return 0;
}

static int basic_symlink_and_readlink(const char *dir)
{
    char longt[1001];
    memset(longt, 'L', 1000);
    longt[1000] = 0;
    for (int i = 0; i < 1000; i += 100)
        longt[i] = '/';
    const char *targets[] = {"t", "target-file", "../somewhere/else", "/absolute/path/x", longt, "dangling/..."};
    int fd = open(pathf("%s/target-file", dir), O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0 && write_all(fd, "abc", 3, 0) == 0 && close(fd) == 0, "create target");
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        char *l = pathf("%s/sym%zu", dir, i);
        CHECK(symlink(targets[i], l) == 0, "symlink %zu", i);
        char got[1100];
        ssize_t n = readlink(l, got, sizeof got);
        CHECK(n == (ssize_t)strlen(targets[i]) && !memcmp(got, targets[i], (size_t)n), "readlink %zu", i);
        struct stat st;
        CHECK(lstat(l, &st) == 0 && S_ISLNK(st.st_mode) && st.st_size == (off_t)strlen(targets[i]),
              "lstat %zu: mode %o size %lld", i, st.st_mode, (long long)st.st_size);
    }
    struct stat st;
    CHECK(stat(pathf("%s/sym1", dir), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 3, "stat through a symlink");
    errno = 0;
    CHECK(stat(pathf("%s/sym3", dir), &st) != 0 && errno == ENOENT, "dangling symlink resolves");
    errno = 0;
    CHECK(symlink("x", pathf("%s/sym0", dir)) != 0 && errno == EEXIST, "symlink over an existing name");
    errno = 0;
    return 0;
}

static int basic_statfs(const char *dir)
{
    struct statvfs a, b;
    CHECK(statvfs(dir, &a) == 0, "statvfs");
    CHECK(a.f_bsize > 0 && a.f_blocks > 0 && a.f_bfree <= a.f_blocks && a.f_bavail <= a.f_bfree,
          "bsize %lu blocks %lu free %lu avail %lu", a.f_bsize, (unsigned long)a.f_blocks,
          (unsigned long)a.f_bfree, (unsigned long)a.f_bavail);
    CHECK(a.f_files == 0 || a.f_ffree <= a.f_files, "ffree %lu > files %lu", (unsigned long)a.f_ffree,
          (unsigned long)a.f_files);
    CHECK(a.f_namemax >= 255, "namemax %lu", a.f_namemax);
    for (int i = 0; i < 20; i++)
        CHECK(statvfs(dir, &b) == 0 && b.f_blocks == a.f_blocks, "statvfs %d: total size changed", i);
    return 0;
}

/* -------------------------------------------------------------- special */

static int special_open_unlink_read(const char *dir)
{
    char *p = pathf("%s/unlinked", dir);
    unsigned char w[20000], r[20000];
    fill(w, sizeof w, 0, 11);
    int fd = open(p, O_CREAT | O_RDWR, 0644);
    CHECK(fd >= 0 && write_all(fd, w, sizeof w, 0) == 0, "create and write");
    CHECK(unlink(p) == 0, "unlink while open");
    struct stat st;
    errno = 0;
    CHECK(stat(p, &st) != 0 && errno == ENOENT, "name still there after unlink");
    errno = 0;
    CHECK(count_prefixed(dir, "unlinked") == 0, "readdir still lists it");
    CHECK(count_prefixed(dir, ".nfs") == 1, "no silly-renamed .nfs file while open (found %d)",
          count_prefixed(dir, ".nfs"));
    CHECK(fsync(fd) == 0, "fsync after unlink");
    drop_caches(); /* the reads below go to the server, through the renamed file */
    CHECK(read_all(fd, r, sizeof r, 0) == (int)sizeof r && !memcmp(r, w, sizeof r), "read after unlink");
    CHECK(write_all(fd, "tail", 4, sizeof w) == 0 && fstat(fd, &st) == 0 && st.st_size == (off_t)sizeof w + 4,
          "write after unlink");
    CHECK(close(fd) == 0, "close");
    CHECK(wait_no_silly(dir) == 0, "the .nfs file stayed after the last close");
    return 0;
}

static int special_chmod_000_open_file_still_writable(const char *dir)
{
    char *sub = pathf("%s/user", dir);
    CHECK(mkdir(sub, 0777) == 0 && chmod(sub, 0777) == 0, "mkdir");
    char p[1024];
    snprintf(p, sizeof p, "%s/mode000", sub);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        if (setgid(4242) != 0 || setuid(4242) != 0)
            _exit(10);
        int fd = open(p, O_CREAT | O_RDWR, 0644);
        if (fd < 0)
            _exit(11);
        if (write_all(fd, "before", 6, 0) != 0 || fsync(fd) != 0)
            _exit(12);
        if (fchmod(fd, 0) != 0)
            _exit(13);
        if (write_all(fd, "-after", 6, 6) != 0)
            _exit(14);
        if (fsync(fd) != 0)
            _exit(15); /* the WRITE reached the server and was refused */
        char b[16] = {0};
        if (read_all(fd, b, sizeof b, 0) != 12 || memcmp(b, "before-after", 12))
            _exit(16);
        if (close(fd) != 0)
            _exit(17);
        /* a new open is refused now */
        if (open(p, O_RDONLY) >= 0 || errno != EACCES)
            _exit(18);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    static const char *steps[] = {"setuid", "create", "first write", "fchmod 0", "write after chmod",
                                  "fsync after chmod", "read back", "close", "reopen not refused"};
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "as uid 4242: %s failed",
          WIFEXITED(status) && WEXITSTATUS(status) >= 10 && WEXITSTATUS(status) <= 18 ? steps[WEXITSTATUS(status) - 10]
                                                                                       : "the child crashed");
    struct stat st;
    CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0 && st.st_size == 12 && st.st_uid == 4242,
          "mode %o size %lld uid %u", st.st_mode & 07777, (long long)st.st_size, st.st_uid);
    drop_caches();
    char b[16] = {0};
    int fd = open(p, O_RDONLY); /* root may */
    CHECK(fd >= 0 && read_all(fd, b, sizeof b, 0) == 12 && !memcmp(b, "before-after", 12),
          "content from the server: '%.12s'", b);
    close(fd);
    return 0;
}

static int special_negative_and_large_seeks(const char *dir)
{
    int fd = open(pathf("%s/seeks", dir), O_CREAT | O_RDWR, 0644);
    CHECK(fd >= 0 && write_all(fd, "0123456789", 10, 0) == 0, "create");
    errno = 0;
    CHECK(lseek(fd, -1, SEEK_SET) == -1 && errno == EINVAL, "lseek -1 SEEK_SET not EINVAL");
    CHECK(lseek(fd, 5, SEEK_SET) == 5, "lseek 5");
    errno = 0;
    CHECK(lseek(fd, -6, SEEK_CUR) == -1 && errno == EINVAL, "lseek before 0 via SEEK_CUR not EINVAL");
    CHECK(lseek(fd, 0, SEEK_CUR) == 5, "position moved by a failed lseek");
    errno = 0;
    CHECK(lseek(fd, -11, SEEK_END) == -1 && errno == EINVAL, "lseek before 0 via SEEK_END not EINVAL");
    CHECK(lseek(fd, -3, SEEK_END) == 7, "lseek -3 from the end");
    char b[4] = {0};
    CHECK(read(fd, b, 3) == 3 && !memcmp(b, "789", 3), "read at -3 from the end");
    off_t big = (off_t)1 << 40;
    CHECK(lseek(fd, big, SEEK_SET) == big, "lseek to 1 TiB");
    CHECK(read(fd, b, 1) == 0, "read past the end is not end of file");
    CHECK(close(fd) == 0, "close");
    return 0;
}

static int special_big_offsets(const char *dir)
{
    char *p = pathf("%s/big", dir);
    int fd = open(p, O_CREAT | O_RDWR, 0644);
    CHECK(fd >= 0, "create");
    const off_t at2g = ((off_t)1 << 31) - 4, at4g = ((off_t)1 << 32) + 1000;
    CHECK(write_all(fd, "across2G", 8, at2g) == 0, "write across 2 GiB");
    CHECK(write_all(fd, "past4G", 6, at4g) == 0, "write past 4 GiB");
    CHECK(close(fd) == 0, "close");
    drop_caches();
    fd = open(p, O_RDONLY);
    struct stat st;
    CHECK(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == at4g + 6, "size %lld, expected %lld", (long long)st.st_size,
          (long long)(at4g + 6));
    char b[16] = {0}, zero[16] = {0};
    CHECK(read_all(fd, b, 8, at2g) == 8 && !memcmp(b, "across2G", 8), "read across 2 GiB: '%.8s'", b);
    CHECK(read_all(fd, b, 6, at4g) == 6 && !memcmp(b, "past4G", 6), "read past 4 GiB: '%.6s'", b);
    CHECK(read_all(fd, b, 16, at4g - 16) == 16 && !memcmp(b, zero, 16), "the hole before 4 GiB is not zeros");
    CHECK(read_all(fd, b, 16, at4g + 6) == 0, "read at the end returned data");
    close(fd);
    CHECK(truncate(p, 0) == 0 && stat(p, &st) == 0 && st.st_size == 0, "truncate back to 0");
    return 0;
}

static int special_holey_file_reads_zeros(const char *dir)
{
    char *p = pathf("%s/holey", dir);
    enum { GAP = (1 << 20) + 7 };
    static unsigned char b[GAP];
    int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0644);
    CHECK(fd >= 0 && write_all(fd, "head", 4, 0) == 0 && write_all(fd, "tail", 4, GAP) == 0, "write");
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            CHECK(close(fd) == 0, "close");
            drop_caches();
            fd = open(p, O_RDONLY);
            CHECK(fd >= 0, "reopen");
        }
        memset(b, 0xee, sizeof b);
        CHECK(read_all(fd, b, GAP, 0) == GAP, "read the hole");
        CHECK(!memcmp(b, "head", 4), "head");
        for (size_t i = 4; i < GAP; i++)
            CHECK(b[i] == 0, "pass %d: byte %zu in the hole is %u", pass, i, b[i]);
        CHECK(read_all(fd, b, 8, GAP) == 4 && !memcmp(b, "tail", 4), "tail");
    }
    close(fd);
    return 0;
}

static int special_exclusive_create(const char *dir)
{
    char *p = pathf("%s/excl", dir);
    int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0640);
    CHECK(fd >= 0, "first O_EXCL create");
    close(fd);
    struct stat st;
    CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640 && st.st_size == 0, "mode %o after O_EXCL create",
          st.st_mode & 07777);
    errno = 0;
    CHECK(open(p, O_CREAT | O_EXCL | O_WRONLY, 0640) < 0 && errno == EEXIST, "second O_EXCL create not EEXIST");
    CHECK(symlink("nowhere", pathf("%s/excl-dangling", dir)) == 0, "symlink");
    errno = 0;
    CHECK(open(pathf("%s/excl-dangling", dir), O_CREAT | O_EXCL | O_WRONLY, 0640) < 0 && errno == EEXIST,
          "O_EXCL through a dangling symlink not EEXIST");
    errno = 0;
    CHECK(unlink(p) == 0, "unlink");
    fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0600);
    CHECK(fd >= 0, "O_EXCL create after unlink");
    close(fd);
    /* several processes race to create one name: exactly one wins */
    enum { RACERS = 4, ROUNDS = 5 };
    for (int round = 0; round < ROUNDS; round++) {
        char race[1024];
        snprintf(race, sizeof race, "%s/race%d", dir, round);
        pid_t pids[RACERS];
        for (int i = 0; i < RACERS; i++) {
            pids[i] = fork();
            CHECK(pids[i] >= 0, "fork");
            if (pids[i] == 0) {
                int f = open(race, O_CREAT | O_EXCL | O_WRONLY, 0644);
                if (f >= 0)
                    _exit(0);
                _exit(errno == EEXIST ? 1 : 2);
            }
        }
        int winners = 0, losers = 0;
        for (int i = 0; i < RACERS; i++) {
            int status;
            CHECK(waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status), "waitpid");
            if (WEXITSTATUS(status) == 0)
                winners++;
            else if (WEXITSTATUS(status) == 1)
                losers++;
        }
        CHECK(winners == 1 && losers == RACERS - 1, "round %d: %d created, %d got EEXIST of %d", round, winners,
              losers, RACERS);
    }
    return 0;
}

static int special_rename_over_open_file(const char *dir)
{
    char *t = pathf("%s/target", dir), *s = pathf("%s/source", dir);
    int tfd = open(t, O_CREAT | O_RDWR, 0644);
    CHECK(tfd >= 0 && write_all(tfd, "old-target", 10, 0) == 0 && fsync(tfd) == 0, "create target");
    int sfd = open(s, O_CREAT | O_WRONLY, 0644);
    CHECK(sfd >= 0 && write_all(sfd, "new", 3, 0) == 0 && close(sfd) == 0, "create source");
    CHECK(rename(s, t) == 0, "rename over the open target");
    CHECK(count_prefixed(dir, ".nfs") == 1, "the replaced open file was not kept as a .nfs file (found %d)",
          count_prefixed(dir, ".nfs"));
    drop_caches();
    char b[16] = {0};
    CHECK(read_all(tfd, b, sizeof b, 0) == 10 && !memcmp(b, "old-target", 10), "the open file now reads '%.10s'", b);
    int nfd = open(t, O_RDONLY);
    memset(b, 0, sizeof b);
    CHECK(nfd >= 0 && read_all(nfd, b, sizeof b, 0) == 3 && !memcmp(b, "new", 3), "the name now reads '%.10s'", b);
    close(nfd);
    errno = 0;
    CHECK(access(s, F_OK) != 0 && errno == ENOENT, "source name still there");
    errno = 0;
    CHECK(close(tfd) == 0, "close");
    CHECK(wait_no_silly(dir) == 0, "the .nfs file stayed after the last close");
    return 0;
}

static int special_truncate_open_file(const char *dir)
{
    char *p = pathf("%s/trunc", dir);
    enum { SIZE = 65536 };
    static unsigned char w[SIZE], r[SIZE * 4];
    fill(w, SIZE, 0, 5);
    int fd = open(p, O_CREAT | O_RDWR | O_TRUNC, 0644);
    CHECK(fd >= 0 && write_all(fd, w, SIZE, 0) == 0, "write");
    CHECK(truncate(p, 100) == 0, "truncate by name to 100");
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 100, "fstat after truncate by name: %lld", (long long)st.st_size);
    CHECK(read_all(fd, r, SIZE, 0) == 100 && !memcmp(r, w, 100), "read after truncate");
    CHECK(ftruncate(fd, 200000) == 0 && fstat(fd, &st) == 0 && st.st_size == 200000, "grow with ftruncate");
    CHECK(fsync(fd) == 0, "fsync");
    drop_caches();
    memset(r, 0xee, sizeof r);
    CHECK(read_all(fd, r, sizeof r, 0) == 200000, "read after growing");
    CHECK(!memcmp(r, w, 100), "first 100 bytes changed");
    for (int i = 100; i < 200000; i++)
        CHECK(r[i] == 0, "byte %d after the truncate is %u, not 0", i, r[i]);
    /* a write past the truncated end through the old descriptor */
    CHECK(ftruncate(fd, 10) == 0 && write_all(fd, "X", 1, 50) == 0 && fsync(fd) == 0, "write after shrink");
    CHECK(fstat(fd, &st) == 0 && st.st_size == 51, "size %lld, expected 51", (long long)st.st_size);
    CHECK(read_all(fd, r, 64, 0) == 51 && !memcmp(r, w, 10) && r[20] == 0 && r[50] == 'X', "content after shrink");
    close(fd);
    return 0;
}

struct test {
    const char *group, *name;
    int (*fn)(const char *dir);
};
static const struct test tests[] = {
    {"basic", "create_tree_then_remove_it", basic_create_tree_then_remove_it},
    {"basic", "lookups_across_folders", basic_lookups_across_folders},
    {"basic", "setattr_getattr", basic_setattr_getattr},
    {"basic", "write_then_read_verify", basic_write_then_read_verify},
    {"basic", "readdir_many_entries", basic_readdir_many_entries},
    {"basic", "link_and_rename", basic_link_and_rename},
    {"basic", "symlink_and_readlink", basic_symlink_and_readlink},
    {"basic", "statfs", basic_statfs},
    {"special", "open_unlink_read", special_open_unlink_read},
    {"special", "chmod_000_open_file_still_writable", special_chmod_000_open_file_still_writable},
    {"special", "negative_and_large_seeks", special_negative_and_large_seeks},
    {"special", "big_offsets", special_big_offsets},
    {"special", "holey_file_reads_zeros", special_holey_file_reads_zeros},
    {"special", "exclusive_create", special_exclusive_create},
    {"special", "rename_over_open_file", special_rename_over_open_file},
    {"special", "truncate_open_file", special_truncate_open_file},
};

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "-C")) {
        may_drop_caches = 1;
        argv++;
        argc--;
    }
    if (argc != 3 || (strcmp(argv[1], "basic") && strcmp(argv[1], "special") && strcmp(argv[1], "all"))) {
        fprintf(stderr, "usage: fstests [-C] basic|special|all DIR\n");
        return 2;
    }
    base = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    umask(0);
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        const struct test *t = &tests[i];
        if (strcmp(argv[1], "all") && strcmp(argv[1], t->group))
            continue;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s_%s", base, t->group, t->name);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        why[0] = 0;
        errno = 0;
        int rc = mkdir(dir, 0755) == 0 ? t->fn(dir) : (snprintf(why, sizeof why, "mkdir %s: %s", dir, strerror(errno)), -1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        ran++;
        if (rc == 0 && rm_tree(dir) != 0) {
            snprintf(why, sizeof why, "removing %s: %s", dir, strerror(errno));
            rc = -1;
        }
        if (rc == 0) {
            printf("fstests: PASS %s_%s (%ld ms)\n", t->group, t->name, ms);
        } else {
            printf("fstests: FAIL %s_%s: %s\n", t->group, t->name, why);
            failed++;
        }
    }
    printf("fstests: %s: %d of %d passed\n", argv[1], ran - failed, ran);
    return failed ? 1 : 0;
}
