/*
 * fsx: a file system exerciser for the guest (static, busybox initramfs).
 *
 * One file, a seeded pseudo-random sequence of operations on it, and an
 * in-memory model of what the file must hold. Every byte read back (buffered,
 * through mmap, with O_DIRECT so the read reaches the server) is compared with
 * the model; every size the kernel reports is compared with the model's. On a
 * mismatch it prints the first bad offset, the expected and found bytes and the
 * last operations, and exits 1.
 *
 *   fsx [options] FILE
 *     -S SEED     PRNG seed (default 1); the same seed gives the same operations
 *     -N OPS      number of operations (default 10000)
 *     -l BYTES    largest file size (default 262144)
 *     -o BYTES    largest read/write length (default 65536)
 *     -K OP       after operation OP print the line "NFSGW-KILL-GATEWAY" (once)
 *     -m PATH     at the end write the model's contents (exactly the file size) to PATH
 *     -C          allow "drop caches" operations (/proc/sys/vm/drop_caches)
 *     -P N        progress line every N operations (default 1000; 0: none)
 *     -X OP       self-test: after operation OP change one byte of the file behind
 *                 the model's back (a later read or the final check must fail)
 *     -a          align O_DIRECT offsets and lengths to 4 KiB (for local file
 *                 systems in a hand run; NFS takes any offset and length)
 *
 * Operations: buffered read and write at random offsets and lengths, truncate
 * down and up, mmap read, mmap write (extending with ftruncate first, msync'd),
 * O_DIRECT read and write through a second descriptor, fsync, close and reopen,
 * and (with -C) fsync + drop caches so the next read comes from the server.
 *
 * Bytes written by operation n at file offset p are (n * 31 + p) % 255 + 1:
 * never zero (a zero where data belongs is lost data; a hole reads as zero),
 * and the writing operation can be told from the value (printed on mismatch).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum op_kind {
    OP_READ, OP_WRITE, OP_TRUNCATE, OP_MAPREAD, OP_MAPWRITE, OP_DREAD, OP_DWRITE,
    OP_FSYNC, OP_REOPEN, OP_DROPCACHE, OP_KINDS
};
static const char *const op_names[OP_KINDS] = {
    "read", "write", "truncate", "mapread", "mapwrite", "dread", "dwrite", "fsync", "reopen", "dropcache",
};
/* Relative weights of the operations. Each truncate, mmap write (msync), O_DIRECT
 * write, fsync, reopen and drop caches costs the server a WRITE and COMMIT or a
 * SETATTR; buffered reads and writes mostly reach it when pages are missing or
 * flushed. Under TCG the former cost 50-200 ms each, the latter ~20 ms. */
static const unsigned op_weight[OP_KINDS] = {26, 28, 4, 8, 5, 8, 4, 3, 4, 2};

struct logged_op {
    long n;
    int kind;
    uint64_t off, len; /* for truncate: off = old size, len = new size */
};
enum { LOG_SIZE = 48 };

static struct logged_op oplog[LOG_SIZE];
static long ops_done;
static const char *path;
static int fd = -1, dfd = -1;
static unsigned char *model; /* maxlen bytes; [size, maxlen) always zero */
static uint64_t size;        /* the model's file size */
static uint64_t maxlen = 262144, maxoplen = 65536;
static unsigned char *buf;  /* maxoplen bytes, page aligned (O_DIRECT) */
static long pagesize;
static uint64_t seed = 1;
static long counts[OP_KINDS];
static double op_seconds[OP_KINDS];
static int align_direct;

/* xorshift64* */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

static void log_op(int kind, uint64_t off, uint64_t len)
{
    struct logged_op *l = &oplog[ops_done % LOG_SIZE];
    l->n = ops_done;
    l->kind = kind;
    l->off = off;
    l->len = len;
}

static void dump_log(void)
{
    long first = ops_done >= LOG_SIZE ? ops_done - LOG_SIZE + 1 : 0;
    fprintf(stderr, "fsx: last operations (seed %" PRIu64 "):\n", seed);
    for (long n = first > 0 ? first : 1; n <= ops_done; n++) {
        const struct logged_op *l = &oplog[n % LOG_SIZE];
        if (l->n != n)
            continue;
        if (l->kind == OP_TRUNCATE)
            fprintf(stderr, "  %6ld truncate %" PRIu64 " -> %" PRIu64 "\n", n, l->off, l->len);
        else
            fprintf(stderr, "  %6ld %-9s off %7" PRIu64 " len %6" PRIu64 " (to %" PRIu64 ")\n", n,
                    op_names[l->kind], l->off, l->len, l->off + l->len);
    }
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fsx: FAIL at op %ld (seed %" PRIu64 ", %s): ", ops_done, seed, path);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    dump_log();
    exit(1);
}

static unsigned char pattern(long n, uint64_t p) { return (unsigned char)((n * 31 + (long)(p % 255)) % 255 + 1); }

/* Which operation (mod 255) wrote byte value b at offset p: 31 * 181 = 1 (mod 255). */
static long writer_mod255(unsigned char b, uint64_t p)
{
    long v = ((long)b - 1 - (long)(p % 255)) % 255;
    if (v < 0)
        v += 255;
    return v * 181 % 255;
}

static void compare(const unsigned char *got, uint64_t off, uint64_t len, const char *how)
{
    if (memcmp(got, model + off, len) == 0)
        return;
    uint64_t i = 0;
    while (got[i] == model[off + i])
        i++;
    uint64_t bad_end = i;
    while (bad_end < len && got[bad_end] != model[off + bad_end])
        bad_end++;
    fprintf(stderr, "fsx: %s mismatch at offset %" PRIu64 " (0x%" PRIx64 "), bad through %" PRIu64
                    " at least; file size %" PRIu64 "\n",
            how, off + i, off + i, off + bad_end, size);
    fprintf(stderr, "  offset    expected  got\n");
    for (uint64_t j = i; j < len && j < i + 16; j++) {
        uint64_t p = off + j;
        fprintf(stderr, "  %7" PRIu64 "   %3u (op%%255=%3ld)   %3u", p, model[p], model[p] ? writer_mod255(model[p], p) : -1L,
                got[j]);
        if (got[j])
            fprintf(stderr, " (op%%255=%3ld)", writer_mod255(got[j], p));
        fprintf(stderr, "%s\n", got[j] == model[p] ? "" : "  <--");
    }
    die("%s read of %" PRIu64 "+%" PRIu64 " differs from the model", how, off, len);
}

static void check_size(const char *when)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        die("fstat: %s", strerror(errno));
    if ((uint64_t)st.st_size != size)
        die("%s: size %lld, model %" PRIu64, when, (long long)st.st_size, size);
}

static void full_pread(int f, unsigned char *p, uint64_t len, uint64_t off, const char *how)
{
    uint64_t done = 0;
    while (done < len) {
        ssize_t r = pread(f, p + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            die("%s pread %" PRIu64 "+%" PRIu64 ": %s", how, off, len, strerror(errno));
        if (r == 0)
            die("%s pread %" PRIu64 "+%" PRIu64 ": end of file after %" PRIu64 " bytes (model size %" PRIu64 ")",
                how, off, len, done, size);
        done += (uint64_t)r;
    }
}

static void full_pwrite(int f, const unsigned char *p, uint64_t len, uint64_t off, const char *how)
{
    uint64_t done = 0;
    while (done < len) {
        ssize_t w = pwrite(f, p + done, len - done, (off_t)(off + done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("%s pwrite %" PRIu64 "+%" PRIu64 ": %s", how, off, len, w < 0 ? strerror(errno) : "wrote 0");
        done += (uint64_t)w;
    }
}

static void open_file(int create)
{
    fd = open(path, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), 0644);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    dfd = open(path, O_RDWR | O_DIRECT);
    if (dfd < 0)
        die("open %s O_DIRECT: %s", path, strerror(errno));
}

static void close_file(void)
{
    if (close(dfd) != 0)
        die("close (O_DIRECT): %s", strerror(errno));
    if (close(fd) != 0)
        die("close: %s", strerror(errno));
    fd = dfd = -1;
}

/* A random range inside the current file; len 0 when the file is empty. */
static void pick_inside(uint64_t *off, uint64_t *len)
{
    if (size == 0) {
        *off = *len = 0;
        return;
    }
    *off = rnd_below(size);
    *len = 1 + rnd_below(maxoplen);
    if (*off + *len > size)
        *len = size - *off;
}

/* A random range anywhere below maxlen (writes may extend the file). */
static void pick_anywhere(uint64_t *off, uint64_t *len)
{
    *off = rnd_below(maxlen);
    *len = 1 + rnd_below(maxoplen);
    if (*off + *len > maxlen)
        *len = maxlen - *off;
}

static void fill(long n, uint64_t off, uint64_t len)
{
    /* pattern(n, p + 1) is pattern(n, p) + 1, wrapping from 255 to 1 */
    unsigned char v = pattern(n, off);
    for (uint64_t i = 0; i < len; i++) {
        buf[i] = v;
        v = v == 255 ? 1 : v + 1;
    }
}

static void model_write(uint64_t off, uint64_t len)
{
    memcpy(model + off, buf, len);
    if (off + len > size)
        size = off + len;
}

static void model_truncate(uint64_t to)
{
    if (to < size)
        memset(model + to, 0, size - to);
    size = to;
}

static void drop_caches(void)
{
    if (fsync(fd) != 0)
        die("fsync before drop_caches: %s", strerror(errno));
    int f = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (f < 0)
        die("open drop_caches: %s", strerror(errno));
    if (write(f, "3\n", 2) != 2)
        die("write drop_caches: %s", strerror(errno));
    close(f);
}

static void do_op(int kind)
{
    uint64_t off = 0, len = 0;
    switch (kind) {
    case OP_READ:
        pick_inside(&off, &len);
        log_op(kind, off, len);
        if (len) {
            full_pread(fd, buf, len, off, "buffered");
            compare(buf, off, len, "buffered");
        }
        break;
    case OP_DREAD:
        pick_inside(&off, &len);
        if (align_direct) {
            off -= off % 4096;
            len = size - off < 4096 ? 0 : 4096;
        }
        log_op(kind, off, len);
        if (len) {
            full_pread(dfd, buf, len, off, "O_DIRECT");
            compare(buf, off, len, "O_DIRECT");
        }
        break;
    case OP_MAPREAD: {
        pick_inside(&off, &len);
        log_op(kind, off, len);
        if (!len)
            break;
        uint64_t start = off - off % (uint64_t)pagesize;
        unsigned char *m = mmap(NULL, len + (off - start), PROT_READ, MAP_SHARED, fd, (off_t)start);
        if (m == MAP_FAILED)
            die("mmap read %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(errno));
        memcpy(buf, m + (off - start), len);
        if (munmap(m, len + (off - start)) != 0)
            die("munmap: %s", strerror(errno));
        compare(buf, off, len, "mmap");
        break;
    }
    case OP_WRITE:
    case OP_DWRITE:
        pick_anywhere(&off, &len);
        if (kind == OP_DWRITE && align_direct) {
            off -= off % 4096;
            len = maxlen - off < 4096 ? 0 : 4096;
        }
        log_op(kind, off, len);
        fill(ops_done, off, len);
        full_pwrite(kind == OP_WRITE ? fd : dfd, buf, len, off, op_names[kind]);
        model_write(off, len);
        break;
    case OP_MAPWRITE: {
        pick_anywhere(&off, &len);
        log_op(kind, off, len);
        if (off + len > size) {
            if (ftruncate(fd, (off_t)(off + len)) != 0)
                die("ftruncate to %" PRIu64 " for mmap write: %s", off + len, strerror(errno));
            model_truncate(off + len);
        }
        uint64_t start = off - off % (uint64_t)pagesize;
        unsigned char *m = mmap(NULL, len + (off - start), PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
        if (m == MAP_FAILED)
            die("mmap write %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(errno));
        fill(ops_done, off, len);
        memcpy(m + (off - start), buf, len);
        if (msync(m, len + (off - start), MS_SYNC) != 0)
            die("msync: %s", strerror(errno));
        if (munmap(m, len + (off - start)) != 0)
            die("munmap: %s", strerror(errno));
        model_write(off, len);
        break;
    }
    case OP_TRUNCATE: {
        /* Half of them shrink, half grow (when there is room). */
        uint64_t to = rnd_below(maxlen + 1);
        if ((rnd() & 1) && size > 0)
            to = rnd_below(size);
        log_op(kind, size, to);
        if (ftruncate(fd, (off_t)to) != 0)
            die("ftruncate %" PRIu64 " -> %" PRIu64 ": %s", size, to, strerror(errno));
        model_truncate(to);
        break;
    }
    case OP_FSYNC:
        log_op(kind, 0, size);
        if (fsync(fd) != 0)
            die("fsync: %s", strerror(errno));
        check_size("after fsync");
        break;
    case OP_REOPEN:
        log_op(kind, 0, size);
        close_file();
        open_file(0);
        check_size("after reopen");
        break;
    case OP_DROPCACHE:
        log_op(kind, 0, size);
        drop_caches();
        check_size("after drop_caches");
        break;
    }
    counts[kind]++;
}

static int pick_kind(int allow_drop)
{
    unsigned total = 0;
    for (int k = 0; k < OP_KINDS; k++)
        total += (k == OP_DROPCACHE && !allow_drop) ? 0 : op_weight[k];
    unsigned r = (unsigned)rnd_below(total);
    for (int k = 0; k < OP_KINDS; k++) {
        unsigned w = (k == OP_DROPCACHE && !allow_drop) ? 0 : op_weight[k];
        if (r < w)
            return k;
        r -= w;
    }
    return OP_READ;
}

static uint64_t parse_num(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || end == s) {
        fprintf(stderr, "fsx: bad %s '%s'\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long nops = 10000, kill_at = -1, progress = 1000, corrupt_at = -1;
    const char *model_out = NULL;
    int allow_drop = 0, c;
    while ((c = getopt(argc, argv, "S:N:l:o:K:m:CP:aX:")) != -1) {
        switch (c) {
        case 'S': seed = parse_num(optarg, "seed"); break;
        case 'N': nops = (long)parse_num(optarg, "op count"); break;
        case 'l': maxlen = parse_num(optarg, "size"); break;
        case 'o': maxoplen = parse_num(optarg, "length"); break;
        case 'K': kill_at = (long)parse_num(optarg, "kill op"); break;
        case 'm': model_out = optarg; break;
        case 'C': allow_drop = 1; break;
        case 'a': align_direct = 1; break;
        case 'X': corrupt_at = (long)parse_num(optarg, "corrupt op"); break;
        case 'P': progress = (long)parse_num(optarg, "progress"); break;
        default:
            fprintf(stderr, "usage: fsx [-S seed] [-N ops] [-l maxlen] [-o maxoplen] [-K op] [-m model] [-C] [-P n] FILE\n");
            return 2;
        }
    }
    if (optind != argc - 1 || maxlen == 0 || maxoplen == 0 || maxoplen > maxlen || maxlen > (1u << 30)) {
        fprintf(stderr, "fsx: need one FILE, 0 < maxoplen <= maxlen <= 1 GiB\n");
        return 2;
    }
    path = argv[optind];
    pagesize = sysconf(_SC_PAGESIZE);
    rng_state = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
    if (rng_state == 0)
        rng_state = 1;
    model = calloc(maxlen, 1);
    if (!model || posix_memalign((void **)&buf, (size_t)pagesize, maxoplen) != 0) {
        fprintf(stderr, "fsx: out of memory\n");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    ops_done = 0;
    open_file(1);
    printf("fsx: %s seed %" PRIu64 ", %ld ops, maxlen %" PRIu64 ", maxoplen %" PRIu64 "\n", path, seed, nops, maxlen,
           maxoplen);
    for (ops_done = 1; ops_done <= nops; ops_done++) {
        struct timespec t0, t1;
        int kind = pick_kind(allow_drop);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do_op(kind);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        op_seconds[kind] += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (ops_done == corrupt_at && size > 0) {
            unsigned char b = (unsigned char)(model[size / 2] ^ 0x5a);
            full_pwrite(fd, &b, 1, size / 2, "self-test corruption");
            printf("fsx: self-test: changed the byte at %" PRIu64 " behind the model's back\n", size / 2);
        }
        if (ops_done == kill_at)
            printf("fsx seed %" PRIu64 ": op %ld NFSGW-KILL-GATEWAY\n", seed, ops_done);
        if (progress > 0 && ops_done % progress == 0)
            printf("fsx seed %" PRIu64 ": %ld ops, size %" PRIu64 "\n", seed, ops_done, size);
    }
    ops_done = nops;
    /* The end: close (flush and COMMIT), reopen and compare the whole file,
     * from the server when drop caches is allowed. */
    close_file();
    open_file(0);
    if (allow_drop)
        drop_caches();
    check_size("at the end");
    unsigned char *all = malloc(size ? size : 1);
    if (!all)
        die("out of memory");
    full_pread(fd, all, size, 0, "final");
    compare(all, 0, size, "final");
    free(all);
    close_file();
    if (model_out) {
        FILE *m = fopen(model_out, "w");
        if (!m || fwrite(model, 1, size, m) != size || fclose(m) != 0) {
            fprintf(stderr, "fsx: writing the model to %s failed\n", model_out);
            return 1;
        }
    }
    printf("fsx: seed %" PRIu64 " passed %ld ops, final size %" PRIu64 ":", seed, nops, size);
    for (int k = 0; k < OP_KINDS; k++)
        printf(" %s %ld", op_names[k], counts[k]);
    printf("\nfsx: seed %" PRIu64 " seconds per kind:", seed);
    for (int k = 0; k < OP_KINDS; k++)
        printf(" %s %.1f", op_names[k], op_seconds[k]);
    printf("\n");
    return 0;
}
