/*
 * client.c - ggufkit_zc: stands in for the ggufkit binary in the sanitizer
 * builds' CLI scripts, asking the zygote (server.c) to run the command. Built
 * without sanitizers: it must start fast. It sends its argv, environment, cwd,
 * umask, limits, signal state and every open fd; forwards the signals it gets
 * to the command; and ends as the command ended (same exit code, or death by
 * the same signal).
 *
 * Environment: GGUFKIT_ZYGOTE (the server's socket), GGUFKIT_ZYGOTE_BIN (the
 * real binary). It execs the real binary itself when LD_PRELOAD is set, the
 * server cannot be reached, or the server refuses (another binary, other
 * sanitizer options).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "protocol.h"

extern char **environ;

static const char *real_bin;
static int sock = -1;

/* Runs the real binary in this process, as if it had been run directly. */
static void run_real(char **argv) {
    if (sock >= 0) close(sock);
    argv[0] = (char *)real_bin;
    execv(real_bin, argv);
    fprintf(stderr, "ggufkit_zc: cannot run %s: %s\n", real_bin, strerror(errno));
    exit(127);
}

/* Growable byte buffer for the request. */
typedef struct { char *p; size_t n, cap; } buf;

static void put(buf *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (b->p == NULL) { perror("ggufkit_zc"); exit(127); }
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_str(buf *b, const char *s) { put(b, s, strlen(s) + 1); }

/* The open fds of this process but the socket: their numbers, in fds[]; the count. */
static int list_fds(int **fds) {
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) return -1;
    int n = 0, cap = 64;
    *fds = malloc(cap * sizeof(int));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        if (fd == dirfd(d) || fd == sock) continue;
        if (n == cap) *fds = realloc(*fds, (cap *= 2) * sizeof(int));
        (*fds)[n++] = fd;
    }
    closedir(d);
    return n;
}

static int send_fds(const int *fds, int n) {
    for (int at = 0; at < n; at += ZY_FD_CHUNK) {
        uint32_t count = (uint32_t)(n - at < ZY_FD_CHUNK ? n - at : ZY_FD_CHUNK);
        union { char buf[CMSG_SPACE(sizeof(int) * ZY_FD_CHUNK)]; struct cmsghdr align; } u;
        memset(&u, 0, sizeof u);
        struct iovec iov = { &count, sizeof count };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                              .msg_controllen = CMSG_SPACE(sizeof(int) * count) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * count);
        memcpy(CMSG_DATA(c), fds + at, sizeof(int) * count);
        ssize_t r;
        do r = sendmsg(sock, &msg, MSG_NOSIGNAL); while (r < 0 && errno == EINTR);
        if (r != (ssize_t)sizeof count) return -1;
    }
    return 0;
}

/* Sends the request; 0 on success. */
static int send_request(int argc, char **argv) {
    zy_fixed fx;
    memset(&fx, 0, sizeof fx);
    mode_t m = umask(0);
    umask(m);
    fx.umask = m;
    fx.argc = (uint32_t)argc;
    for (char **e = environ; *e != NULL; e++) fx.envc++;
    sigset_t blocked;
    sigprocmask(SIG_BLOCK, NULL, &blocked);
    for (int s = 1; s < 65; s++) {
        struct sigaction sa;
        if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN) fx.ignored |= 1ull << (s - 1);
        if (sigismember(&blocked, s) == 1) fx.blocked |= 1ull << (s - 1);
    }
    for (int r = 0; r < ZY_NLIMITS; r++) {
        struct rlimit rl;
        if (getrlimit(r, &rl) != 0) return -1;
        fx.limits[r][0] = rl.rlim_cur;
        fx.limits[r][1] = rl.rlim_max;
    }
    char *cwd = getcwd(NULL, 0);
    if (cwd == NULL) return -1;
    int *fds;
    int nfds = list_fds(&fds);
    if (nfds < 0 || nfds > ZY_MAX_FDS) return -1;

    buf b = { 0 };
    put(&b, &fx, sizeof fx);
    put_str(&b, real_bin);
    put_str(&b, cwd);
    put_str(&b, real_bin);   /* argv[0]: the real binary's, as run_real gives it */
    for (int i = 1; i < argc; i++) put_str(&b, argv[i]);
    for (char **e = environ; *e != NULL; e++) put_str(&b, *e);
    for (int i = 0; i < nfds; i++) {
        int32_t v = fds[i];
        put(&b, &v, sizeof v);
    }
    zy_hello h = { ZY_MAGIC, (uint32_t)b.n, (uint32_t)nfds };
    int rc = zy_send_full(sock, &h, sizeof h) == 0 && send_fds(fds, nfds) == 0 && zy_send_full(sock, b.p, b.n) == 0 ? 0 : -1;
    free(b.p);
    free(fds);
    free(cwd);
    return rc;
}

/* A signal the client gets goes to the command. */
static pid_t command;
static void forward(int sig) {
    int saved = errno;
    kill(command, sig);
    errno = saved;
}

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
                                 SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH };

/* Dies of signal sig, as the command did. */
static void die_of(int sig) {
    struct rlimit none = { 0, 0 };
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    raise(sig);
    _exit(128 + sig);
}

int main(int argc, char **argv) {
    real_bin = getenv("GGUFKIT_ZYGOTE_BIN");
    const char *path = getenv("GGUFKIT_ZYGOTE");
    if (real_bin == NULL || *real_bin == '\0') {
        fprintf(stderr, "ggufkit_zc: GGUFKIT_ZYGOTE_BIN is not set\n");
        return 127;
    }
    const char *preload = getenv("LD_PRELOAD");
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if ((preload != NULL && *preload != '\0') || path == NULL || strlen(path) >= sizeof addr.sun_path)
        run_real(argv);
    strcpy(addr.sun_path, path);
    sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) run_real(argv);
    if (send_request(argc, argv) != 0) run_real(argv);
    /* The command may start before the client hears so: a signal meanwhile
     * waits, blocked, and goes to the command once the handlers are in place. */
    sigset_t held, before;
    sigemptyset(&held);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaddset(&held, forwarded[i]);
    sigprocmask(SIG_BLOCK, &held, &before);
    zy_reply r;
    /* Anything but "started" (refused, a request the server could not take): run it here. */
    if (zy_read_full(sock, &r, sizeof r) != 0 || r.kind != ZY_STARTED || r.value <= 0) {
        sigprocmask(SIG_SETMASK, &before, NULL);
        run_real(argv);
    }
    /* From here on the command runs: signals go to it. */
    command = r.value;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaction(forwarded[i], &sa, NULL);
    sigprocmask(SIG_SETMASK, &before, NULL);
    if (zy_read_full(sock, &r, sizeof r) != 0) {
        fprintf(stderr, "ggufkit_zc: the zygote closed the connection before the command ended\n");
        return 127;
    }
    if (r.kind == ZY_SIGNALED) die_of(r.value);
    return r.value;
}
