/*
 * lockcount: lock tests for the guest (static, built into the initramfs).
 *
 *   lockcount count fcntl|flock|none FILE N [DEADLINE_S]
 *       N times: lock FILE (fcntl F_SETLKW on the whole file, or flock
 *       LOCK_EX; "none" takes no lock, for the negative control), read the
 *       decimal counter at its start, write counter+1, unlock. The descriptor
 *       stays open; the Linux NFS client flushes written data before an unlock
 *       and drops its cached data after a lock, so the next holder reads what
 *       the last one wrote. Prints the last value it wrote, how long it took and
 *       how long the longest lock wait was. Fails past DEADLINE_S (default 900;
 *       a lock call that hangs is interrupted by an alarm).
 *   lockcount with fcntl|flock FILE COMMAND [ARGS...]
 *       Takes the lock (blocking), prints "NFSGW-LOCK-GRANTED after MS ms", runs
 *       COMMAND while holding it (a child; fcntl locks belong to this process),
 *       prints "NFSGW-LOCK-RELEASING", unlocks, prints "NFSGW-LOCK-RELEASED".
 *       Exits with COMMAND's status (2 on a lock error).
 *   lockcount try fcntl|flock FILE
 *       One non-blocking attempt: exits 0 when it got the lock (and releases
 *       it), 1 when another owner holds it (EAGAIN/EACCES/EWOULDBLOCK), 2 on
 *       any other error.
 *
 * Lines meant for the host start with "NFSGW-LOCK" or "lockcount:".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_FCNTL, MODE_FLOCK, MODE_NONE };

static volatile sig_atomic_t alarmed;

static void on_alarm(int sig)
{
    (void)sig;
    alarmed = 1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_mode(const char *s, enum mode *m)
{
    if (strcmp(s, "fcntl") == 0) *m = MODE_FCNTL;
    else if (strcmp(s, "flock") == 0) *m = MODE_FLOCK;
    else if (strcmp(s, "none") == 0) *m = MODE_NONE;
    else return -1;
    return 0;
}

/* take_lock: 0 when held, else errno. */
static int take_lock(int fd, enum mode m, int wait)
{
    if (m == MODE_NONE) return 0;
    if (m == MODE_FLOCK) return flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0 ? 0 : errno;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl) == 0 ? 0 : errno;
}

static int drop_lock(int fd, enum mode m)
{
    if (m == MODE_NONE) return 0;
    if (m == MODE_FLOCK) return flock(fd, LOCK_UN) == 0 ? 0 : errno;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_UNLCK;
    fl.l_whence = SEEK_SET;
    return fcntl(fd, F_SETLK, &fl) == 0 ? 0 : errno;
}

static int count(enum mode m, const char *path, long n, long deadline_s)
{
    int fd = open(path, O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "lockcount: open %s: %s\n", path, strerror(errno));
        return 1;
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)deadline_s);
    long long t0 = now_ms(), longest = 0;
    long waits_over_1s = 0, last = -1;
    for (long i = 0; i < n; i++) {
        long long w0 = now_ms();
        int e = take_lock(fd, m, 1);
        if (e != 0) {
            fprintf(stderr, "lockcount: lock %ld of %ld: %s%s\n", i + 1, n, strerror(e),
                    alarmed ? " (deadline passed)" : "");
            return 1;
        }
        long long waited = now_ms() - w0;
        if (waited > longest) longest = waited;
        if (waited > 1000) waits_over_1s++;
        char buf[32];
        ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
        if (got <= 0) {
            fprintf(stderr, "lockcount: read %ld: %s\n", i + 1, got < 0 ? strerror(errno) : "empty file");
            return 1;
        }
        buf[got] = '\0';
        char *end;
        long v = strtol(buf, &end, 10);
        if (end == buf || (*end != '\n' && *end != '\0')) {
            fprintf(stderr, "lockcount: counter %ld is not a number: '%s'\n", i + 1, buf);
            return 1;
        }
        int len = snprintf(buf, sizeof buf, "%010ld\n", v + 1);
        if (pwrite(fd, buf, (size_t)len, 0) != len) {
            fprintf(stderr, "lockcount: write %ld: %s\n", i + 1, strerror(errno));
            return 1;
        }
        last = v + 1;
        e = drop_lock(fd, m);
        if (e != 0) {
            fprintf(stderr, "lockcount: unlock %ld: %s\n", i + 1, strerror(e));
            return 1;
        }
        if (alarmed) {
            fprintf(stderr, "lockcount: deadline of %ld s passed after %ld increments\n", deadline_s, i + 1);
            return 1;
        }
    }
    alarm(0);
    if (close(fd) != 0) {
        fprintf(stderr, "lockcount: close: %s\n", strerror(errno));
        return 1;
    }
    printf("lockcount: %ld increments in %lld ms, last wrote %ld, longest lock wait %lld ms, "
           "%ld waits over 1 s\n", n, now_ms() - t0, last, longest, waits_over_1s);
    return 0;
}

static int with_lock(enum mode m, const char *path, char **argv)
{
    int fd = open(path, O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "lockcount: open %s: %s\n", path, strerror(errno));
        return 2;
    }
    long long t0 = now_ms();
    int e = take_lock(fd, m, 1);
    if (e != 0) {
        fprintf(stderr, "lockcount: lock %s: %s\n", path, strerror(e));
        return 2;
    }
    printf("NFSGW-LOCK-GRANTED after %lld ms\n", now_ms() - t0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "lockcount: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        close(fd);
        execvp(argv[0], argv);
        fprintf(stderr, "lockcount: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    printf("NFSGW-LOCK-RELEASING\n");
    fflush(stdout);
    e = drop_lock(fd, m);
    if (e != 0) {
        fprintf(stderr, "lockcount: unlock %s: %s\n", path, strerror(e));
        return 2;
    }
    printf("NFSGW-LOCK-RELEASED\n");
    fflush(stdout);
    close(fd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

static int try_lock(enum mode m, const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "lockcount: open %s: %s\n", path, strerror(errno));
        return 2;
    }
    int e = take_lock(fd, m, 0);
    if (e == EAGAIN || e == EACCES || e == EWOULDBLOCK) {
        close(fd);
        return 1;
    }
    if (e != 0) {
        fprintf(stderr, "lockcount: try %s: %s\n", path, strerror(e));
        return 2;
    }
    e = drop_lock(fd, m);
    close(fd);
    return e == 0 ? 0 : 2;
}

static int usage(void)
{
    fprintf(stderr, "usage: lockcount count fcntl|flock|none FILE N [DEADLINE_S]\n"
                    "       lockcount with fcntl|flock FILE COMMAND [ARGS...]\n"
                    "       lockcount try fcntl|flock FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    enum mode m;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 4 || parse_mode(argv[2], &m) != 0) return usage();
    if (strcmp(argv[1], "count") == 0 && (argc == 5 || argc == 6)) {
        long n = strtol(argv[4], NULL, 10);
        long deadline = argc == 6 ? strtol(argv[5], NULL, 10) : 900;
        if (n <= 0 || deadline <= 0) return usage();
        return count(m, argv[3], n, deadline);
    }
    if (m == MODE_NONE) return usage();
    if (strcmp(argv[1], "with") == 0 && argc >= 5) return with_lock(m, argv[3], argv + 4);
    if (strcmp(argv[1], "try") == 0 && argc == 4) return try_lock(m, argv[3]);
    return usage();
}
