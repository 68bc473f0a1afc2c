/*
 * ddsum: a fast 64-bit stream checksum and a deterministic data generator, for
 * the 256 MiB dd scenario.
 *
 * Under qemu's TCG emulation sha256sum manages only a few MB/s, which would
 * dominate the scenario's time; this word-at-a-time hash is many times
 * cheaper and still catches lost, duplicated, reordered or flipped bytes. The
 * same source is built for the guest (static) and the host, so both sides
 * compute identical values.
 *
 *   ddsum sum                 checksum of stdin: prints "HEX BYTES"
 *   ddsum gen SEED MIB        writes MIB MiB of pseudo-random bytes to stdout and
 *                             prints their "HEX BYTES" to stderr
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHUNK = 1 << 20 };

struct sum {
    uint64_t h;
    uint64_t bytes;
    unsigned char tail[8];
    size_t tail_len;
};

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static void mix(struct sum *s, uint64_t w)
{
    s->h = rotl(s->h ^ w, 29) * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
}

static uint64_t load_le(const unsigned char *p)
{
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--)
        w = (w << 8) | p[i];
    return w;
}

static void update(struct sum *s, const unsigned char *p, size_t n)
{
    s->bytes += n;
    while (n > 0 && s->tail_len > 0) { /* finish a word split across calls */
        s->tail[s->tail_len++] = *p++;
        n--;
        if (s->tail_len == 8) {
            mix(s, load_le(s->tail));
            s->tail_len = 0;
        }
    }
    for (; n >= 8; p += 8, n -= 8)
        mix(s, load_le(p));
    while (n-- > 0)
        s->tail[s->tail_len++] = *p++;
}

static uint64_t finish(struct sum *s)
{
    unsigned char last[8] = {0};
    memcpy(last, s->tail, s->tail_len);
    mix(s, load_le(last));
    mix(s, s->bytes);
    return s->h;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static unsigned char buf[CHUNK];
    struct sum s = {.h = 0x243f6a8885a308d3ULL};
    if (argc == 2 && strcmp(argv[1], "sum") == 0) {
        ssize_t r;
        while ((r = read(0, buf, sizeof buf)) != 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                perror("ddsum: read");
                return 1;
            }
            update(&s, buf, (size_t)r);
        }
        uint64_t bytes = s.bytes;
        printf("%016" PRIx64 " %" PRIu64 "\n", finish(&s), bytes);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "gen") == 0) {
        uint64_t x = strtoull(argv[2], NULL, 0) | 1;
        long mib = strtol(argv[3], NULL, 10);
        if (mib <= 0 || mib > 65536) {
            fprintf(stderr, "ddsum: MIB out of range\n");
            return 2;
        }
        for (long m = 0; m < mib; m++) {
            for (size_t i = 0; i < CHUNK; i += 8) { /* xorshift64* */
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                uint64_t v = x * 0x2545f4914f6cdd1dULL;
                for (int b = 0; b < 8; b++)
                    buf[i + b] = (unsigned char)(v >> (8 * b));
            }
            update(&s, buf, CHUNK);
            if (write_all(1, buf, CHUNK) != 0) {
                perror("ddsum: write");
                return 1;
            }
        }
        uint64_t bytes = s.bytes;
        fprintf(stderr, "%016" PRIx64 " %" PRIu64 "\n", finish(&s), bytes);
        return 0;
    }
    fprintf(stderr, "usage: ddsum sum | ddsum gen SEED MIB\n");
    return 2;
}
