/*
 * phploop: the file-access pattern of a PHP application server, run in the guest.
 *
 * NPROC worker processes each make ITERS passes over NFILES small files
 * f000.php.., doing per file: stat, open, read to EOF, close, and compare the
 * size and bytes with what the host wrote; plus a stat and an open of a file
 * that does not exist (PHP probes include paths that way), which must fail
 * with ENOENT. All in-process: no fork per file, like php-fpm.
 *
 * File i holds the line "<?php echo 'file NNN'; ?>\n" repeated (i % 13) + 1
 * times; the host half of the scenario writes exactly that.
 *
 *   phploop DIR NFILES ITERS NPROC
 * Prints one summary line per worker and exits non-zero on any mismatch.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_FILE = 4096 };

static size_t expected_content(int i, char *buf, size_t cap)
{
    char line[64];
    int n = snprintf(line, sizeof line, "<?php echo 'file %03d'; ?>\n", i);
    size_t len = 0;
    for (int r = 0; r < i % 13 + 1 && len + (size_t)n <= cap; r++) {
        memcpy(buf + len, line, (size_t)n);
        len += (size_t)n;
    }
    return len;
}

static int worker(const char *dir, int nfiles, int iters, int id)
{
    char path[512], want[MAX_FILE], got[MAX_FILE + 1];
    long stats = 0, reads = 0, misses = 0, errors = 0;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < nfiles; i++) {
            size_t want_len = expected_content(i, want, sizeof want);
            snprintf(path, sizeof path, "%s/f%03d.php", dir, i);
            struct stat st;
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != want_len) {
                fprintf(stderr, "worker %d: stat %s: %s size %lld want %zu\n", id, path,
                        strerror(errno), (long long)st.st_size, want_len);
                errors++;
                continue;
            }
            stats++;
            int fd = open(path, O_RDONLY);
            if (fd < 0) {
                fprintf(stderr, "worker %d: open %s: %s\n", id, path, strerror(errno));
                errors++;
                continue;
            }
            size_t have = 0;
            ssize_t r;
            while (have <= MAX_FILE && (r = read(fd, got + have, MAX_FILE + 1 - have)) > 0)
                have += (size_t)r;
            if (close(fd) != 0 || have != want_len || memcmp(got, want, want_len) != 0) {
                fprintf(stderr, "worker %d: %s: read %zu bytes, want %zu, or content differs\n", id, path,
                        have, want_len);
                errors++;
                continue;
            }
            reads++;
            snprintf(path, sizeof path, "%s/missing-%03d-%d.php", dir, i, id);
            errno = 0;
            if (stat(path, &st) == 0 || errno != ENOENT) {
                fprintf(stderr, "worker %d: stat %s should fail with ENOENT\n", id, path);
                errors++;
                continue;
            }
            errno = 0;
            if (open(path, O_RDONLY) >= 0 || errno != ENOENT) {
                fprintf(stderr, "worker %d: open %s should fail with ENOENT\n", id, path);
                errors++;
                continue;
            }
            misses++;
        }
    }
    printf("phploop worker %d: %ld stats %ld reads %ld misses %ld errors\n", id, stats, reads, misses, errors);
    fflush(stdout);
    return errors == 0 && reads == (long)nfiles * iters ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: phploop DIR NFILES ITERS NPROC\n");
        return 2;
    }
    int nfiles = atoi(argv[2]), iters = atoi(argv[3]), nproc = atoi(argv[4]);
    if (nfiles <= 0 || nfiles > 1000 || iters <= 0 || iters > 1000 || nproc <= 0 || nproc > 64) {
        fprintf(stderr, "phploop: arguments out of range\n");
        return 2;
    }
    for (int p = 0; p < nproc; p++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0)
            _exit(worker(argv[1], nfiles, iters, p));
    }
    int failed = 0;
    for (int p = 0; p < nproc; p++) {
        int status;
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
    }
    printf("phploop: %d of %d workers failed\n", failed, nproc);
    return failed ? 1 : 0;
}
