/*
 * server.c - the zygote: a fork server for the sanitizer builds' CLI scripts.
 * A sanitized process spends tens of milliseconds starting (relocations,
 * page faults, runtime set-up) before any command code runs; the server pays
 * that once. Per connection it forks a child, which reads the request (see
 * protocol.h), takes on the client's fds, environment, cwd, umask, limits and
 * signal state, runs the command's main and calls exit(), so atexit handlers
 * and LeakSanitizer's check run as in a process of its own. The server reports
 * the child's status to the client, and kills the child if the client goes
 * away first.
 *
 * zygote_serve() is the loop; the main to run is its parameter (serve_ggufkit.c
 * passes the command's, leaky.c a test program's).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol.h"
#include "zygote.h"

extern char **environ;

/* LeakSanitizer's entry point, when the program is built with it. */
void __lsan_do_recoverable_leak_check(void) __attribute__((weak));
int __lsan_do_recoverable_leak_check_int(void) __attribute__((weak));

/* The signal handlers the process had at start (a sanitizer's): a child keeps those. */
static struct sigaction start_actions[65];
/* The exit status of a child whose request was refused or malformed. */
#define ZY_BAD_REQUEST 125
/* The request, kept reachable from here so the child's leak check does not see it. */
static char *req_buf;
static char **req_argv, **req_env;
static int *req_fds, *req_nums;

static void reply(int sock, int kind, int value) {
    zy_reply r = { kind, value };
    (void)zy_send_full(sock, &r, sizeof r);
}

/* Receives one chunk of fds into out[*got...]; 0 on success. */
static int recv_fd_chunk(int sock, int *out, uint32_t *got, uint32_t total) {
    uint32_t count;
    union { char buf[CMSG_SPACE(sizeof(int) * ZY_FD_CHUNK)]; struct cmsghdr align; } u;
    struct iovec iov = { &count, sizeof count };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
    ssize_t r;
    do r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC); while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof count || (msg.msg_flags & MSG_CTRUNC)) return -1;
    uint32_t n = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (*got + n + k > total) return -1;
        memcpy(out + *got + n, CMSG_DATA(c), k * sizeof(int));
        n += (uint32_t)k;
    }
    if (n != count) return -1;
    *got += n;
    return 0;
}

/* Takes the next NUL-terminated string of the request at *pos; NULL when out of bounds. */
static char *take_string(char *buf, size_t len, size_t *pos) {
    if (*pos >= len) return NULL;
    char *s = buf + *pos, *end = memchr(s, '\0', len - *pos);
    if (end == NULL) return NULL;
    *pos = (size_t)(end - buf) + 1;
    return s;
}

/* Whether the request's value of NAME (in env) equals this process's. */
static int same_env(char **env, const char *name) {
    const char *mine = getenv(name);
    size_t n = strlen(name);
    const char *theirs = NULL;
    for (char **e = env; *e != NULL; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') theirs = *e + n + 1;
    if (mine == NULL || theirs == NULL) return mine == theirs;
    return strcmp(mine, theirs) == 0;
}

/* In the command child: become the client's process and run the command. */
static void become_client(const zy_fixed *fx, const char *cwd, uint32_t nfds, int (*cmd_main)(int, char **)) {
    /* Move the received fds above every number in use, close the rest, put each in its place. */
    int base = 0;
    for (uint32_t i = 0; i < nfds; i++) if (req_nums[i] >= base) base = req_nums[i] + 1;
    for (uint32_t i = 0; i < nfds; i++) if (req_fds[i] >= base) base = req_fds[i] + 1;
    for (uint32_t i = 0; i < nfds; i++) {
        int moved = fcntl(req_fds[i], F_DUPFD_CLOEXEC, base);
        if (moved < 0) _exit(127);
        req_fds[i] = moved;
    }
    if (base > 0) syscall(SYS_close_range, 0u, (unsigned)base - 1, 0u);
    for (uint32_t i = 0; i < nfds; i++)
        if (dup2(req_fds[i], req_nums[i]) < 0) _exit(127);
    syscall(SYS_close_range, (unsigned)base, ~0u, 0u);

    for (int s = 1; s < 65; s++) {
        if (s == SIGKILL || s == SIGSTOP) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        if (start_actions[s].sa_handler != SIG_DFL && start_actions[s].sa_handler != SIG_IGN)
            sa = start_actions[s];
        else
            sa.sa_handler = (fx->ignored >> (s - 1)) & 1 ? SIG_IGN : SIG_DFL;
        sigaction(s, &sa, NULL);
    }
    sigset_t mask;
    sigemptyset(&mask);
    for (int s = 1; s < 65; s++) if ((fx->blocked >> (s - 1)) & 1) sigaddset(&mask, s);
    for (int r = 0; r < ZY_NLIMITS; r++) {
        struct rlimit rl = { (rlim_t)fx->limits[r][0], (rlim_t)fx->limits[r][1] };
        setrlimit(r, &rl);
    }
    umask((mode_t)fx->umask);
    if (chdir(cwd) != 0) {
        fprintf(stderr, "ggufkit_zygote: cannot enter %s: %s\n", cwd, strerror(errno));
        _exit(127);
    }
    environ = req_env;
    sigprocmask(SIG_SETMASK, &mask, NULL);
    exit(cmd_main((int)fx->argc, req_argv));
}

/* In the child forked for connection sock: reads the request and, unless it
 * is refused, becomes the client's command (never returns). */
static void handle(int sock, const char *served, int (*cmd_main)(int, char **)) {
    zy_hello h;
    if (zy_read_full(sock, &h, sizeof h) != 0 || h.magic != ZY_MAGIC || h.length > ZY_MAX_REQUEST ||
        h.length < sizeof(zy_fixed) || h.nfds > ZY_MAX_FDS)
        _exit(ZY_BAD_REQUEST);
    req_fds = calloc(h.nfds + 1, sizeof(int));
    req_nums = calloc(h.nfds + 1, sizeof(int));
    req_buf = malloc(h.length + 1);
    if (req_fds == NULL || req_nums == NULL || req_buf == NULL) _exit(ZY_BAD_REQUEST);
    uint32_t got = 0;
    while (got < h.nfds)
        if (recv_fd_chunk(sock, req_fds, &got, h.nfds) != 0) _exit(ZY_BAD_REQUEST);
    if (zy_read_full(sock, req_buf, h.length) != 0) _exit(ZY_BAD_REQUEST);
    req_buf[h.length] = '\0';

    zy_fixed fx;
    memcpy(&fx, req_buf, sizeof fx);
    size_t pos = sizeof fx;
    char *bin = take_string(req_buf, h.length, &pos), *cwd = take_string(req_buf, h.length, &pos);
    if (bin == NULL || cwd == NULL || fx.argc == 0 || fx.argc > h.length || fx.envc > h.length)
        _exit(ZY_BAD_REQUEST);
    req_argv = calloc(fx.argc + 1, sizeof(char *));
    req_env = calloc(fx.envc + 1, sizeof(char *));
    if (req_argv == NULL || req_env == NULL) _exit(ZY_BAD_REQUEST);
    for (uint32_t i = 0; i < fx.argc; i++)
        if ((req_argv[i] = take_string(req_buf, h.length, &pos)) == NULL) _exit(ZY_BAD_REQUEST);
    for (uint32_t i = 0; i < fx.envc; i++)
        if ((req_env[i] = take_string(req_buf, h.length, &pos)) == NULL) _exit(ZY_BAD_REQUEST);
    if (h.length - pos != (size_t)h.nfds * sizeof(int32_t)) _exit(ZY_BAD_REQUEST);
    memcpy(req_nums, req_buf + pos, (size_t)h.nfds * sizeof(int32_t));
    for (uint32_t i = 0; i < h.nfds; i++) if (req_nums[i] < 0) _exit(ZY_BAD_REQUEST);

    /* Another binary, or sanitizer options the runtime here was not started with: refuse. */
    char real[PATH_MAX];
    if (realpath(bin, real) == NULL || strcmp(real, served) != 0 || !same_env(req_env, "ASAN_OPTIONS") ||
        !same_env(req_env, "UBSAN_OPTIONS") || !same_env(req_env, "LSAN_OPTIONS")) {
        reply(sock, ZY_REFUSED, 0);
        _exit(ZY_BAD_REQUEST);
    }
    reply(sock, ZY_STARTED, (int)getpid());
    become_client(&fx, cwd, h.nfds, cmd_main);
}

/* The commands running: each one's connection and pidfd (the server reports
 * the status when the pidfd says the child ended, and kills the child when
 * the connection says the client went away). */
#define MAX_RUNNING 1024
static struct running { int sock, pidfd; pid_t pid; } running[MAX_RUNNING];
static int n_running;

/* The child of running[i] ended (or its client left: kill it first): report, forget. */
static void finish(int i, int client_gone) {
    struct running *r = &running[i];
    if (client_gone) kill(r->pid, SIGKILL);
    int status;
    while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR) {}
    if (!client_gone) {
        if (WIFSIGNALED(status)) reply(r->sock, ZY_SIGNALED, WTERMSIG(status));
        else reply(r->sock, ZY_EXITED, WEXITSTATUS(status));
    }
    close(r->sock);
    close(r->pidfd);
    running[i] = running[--n_running];
}

/* Starts the child of a new connection c. */
static void start(int lsock, int c, const char *served, int (*cmd_main)(int, char **)) {
    if (n_running == MAX_RUNNING) { close(c); return; }   /* the client runs the binary itself */
    pid_t pid = fork();
    if (pid == 0) {
        close(lsock);
        handle(c, served, cmd_main);
    }
    int pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (pidfd < 0) {
        if (pid > 0) { kill(pid, SIGKILL); waitpid(pid, NULL, 0); }
        close(c);
        return;
    }
    running[n_running++] = (struct running){ c, pidfd, pid };
}

/* Huge pages for the process's writable data (MADV_HUGEPAGE, then
 * MADV_COLLAPSE for what was already mapped in small pages): a child reads
 * megabytes of it at exit, and on machines where every page a new process
 * first touches costs a fault in the hypervisor, one 2 MiB page stands for 512
 * of those (measured on the 2-core test machine: an ASan+UBSan `info` through
 * the server in 37 ms instead of 44). Only mappings of HUGE_MIN to HUGE_MAX
 * bytes: the program's and the runtimes' data, not the sanitizer's shadow or
 * heap reservations. */
#define HUGE_PAGE (2ul << 20)
#define HUGE_MIN (2ul << 20)
#define HUGE_MAX (64ul << 20)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
static void advise_huge(int collapse) {
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps == NULL) return;
    char line[512];
    while (fgets(line, sizeof line, maps) != NULL) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' || perms[1] != 'w') continue;
        if (hi - lo < HUGE_MIN || hi - lo > HUGE_MAX) continue;
        unsigned long a = (lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), b = hi & ~(HUGE_PAGE - 1);
        if (b <= a) continue;
        if (!collapse) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
        else for (unsigned long c = a; c < b; c += HUGE_PAGE) (void)madvise((void *)c, HUGE_PAGE, MADV_COLLAPSE);
    }
    fclose(maps);
}

/* Touches, once, what every child's exit will read (LeakSanitizer's scan of
 * the runtimes' data), in huge pages where the kernel gives them, so the
 * children share those pages instead of faulting them in one by one. */
static void warm_up(void) {
    advise_huge(0);
    if (__lsan_do_recoverable_leak_check_int != NULL) (void)__lsan_do_recoverable_leak_check_int();
    else if (__lsan_do_recoverable_leak_check != NULL) __lsan_do_recoverable_leak_check();
    advise_huge(1);
}

int zygote_serve(int argc, char **argv, int (*cmd_main)(int, char **)) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s SOCKET BINARY (the binary whose command this server runs)\n", argv[0]);
        return 2;
    }
    char served[PATH_MAX];
    if (realpath(argv[2], served) == NULL) {
        fprintf(stderr, "%s: %s: %s\n", argv[0], argv[2], strerror(errno));
        return 2;
    }
    for (int s = 1; s < 65; s++) sigaction(s, NULL, &start_actions[s]);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if (strlen(argv[1]) >= sizeof addr.sun_path) {
        fprintf(stderr, "%s: socket path too long\n", argv[0]);
        return 2;
    }
    strcpy(addr.sun_path, argv[1]);
    int lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(argv[1]);
    if (lsock < 0 || bind(lsock, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lsock, 64) != 0) {
        fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1], strerror(errno));
        return 1;
    }
    warm_up();
    signal(SIGPIPE, SIG_IGN);
    static struct pollfd p[1 + 2 * MAX_RUNNING];
    for (;;) {
        p[0] = (struct pollfd){ lsock, POLLIN, 0 };
        for (int i = 0; i < n_running; i++) {
            p[1 + 2 * i] = (struct pollfd){ running[i].pidfd, POLLIN, 0 };
            p[2 + 2 * i] = (struct pollfd){ running[i].sock, POLLRDHUP, 0 };
        }
        int n = n_running;
        if (poll(p, 1 + 2 * (nfds_t)n, -1) < 0) continue;
        for (int i = n - 1; i >= 0; i--) {   /* from the end: finish() moves the last entry to i */
            if (p[1 + 2 * i].revents) finish(i, 0);
            else if (p[2 + 2 * i].revents) finish(i, 1);
        }
        if (p[0].revents & POLLIN) {
            int c = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0) start(lsock, c, served, cmd_main);
        }
    }
}
