/*
 * protocol.h - what the zygote client (client.c) and server (server.c) say to
 * each other over their Unix stream socket. Test-only: the fork server that
 * runs the sanitizer builds' CLI scripts without a process start per command.
 *
 * Client to server, in order:
 *   1. a zy_hello: magic, the request's byte length, the number of fds;
 *   2. the fds in chunks of at most ZY_FD_CHUNK, each a message whose data is
 *      a uint32_t count and whose SCM_RIGHTS carry that many fds;
 *   3. the request: fields of zy_fixed, then NUL-terminated strings: the
 *      binary's real path, the cwd, argc strings, envc strings; then nfds
 *      int32_t fd numbers (the numbers the fds had in the client, in the
 *      order they were sent).
 * Server to client: a zy_reply {ZY_REFUSED, 0} (the server serves another
 * binary or other sanitizer options: run the binary yourself) or
 * {ZY_STARTED, pid} (the command's process); later {ZY_EXITED, code} or
 * {ZY_SIGNALED, signal}. Any other first answer, or none, means the request
 * was not taken: the client runs the binary itself. The client forwards the
 * signals it gets to the pid; the connection closing before the command ends
 * means the client is gone: the command is killed.
 */
#ifndef GGUFKIT_ZYGOTE_PROTOCOL_H
#define GGUFKIT_ZYGOTE_PROTOCOL_H

#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define ZY_MAGIC 0x7a79676bu      /* "kgyz" */
#define ZY_FD_CHUNK 200           /* below the kernel's 253 fds a message */
#define ZY_MAX_REQUEST (64u << 20)
#define ZY_MAX_FDS 4096
#define ZY_NLIMITS 16             /* RLIMIT_CPU .. RLIMIT_RTTIME */

typedef struct {
    uint32_t magic, length, nfds;
} zy_hello;

typedef struct {
    uint32_t umask;
    uint32_t argc, envc;
    uint64_t ignored;             /* bit s-1: signal s was SIG_IGN */
    uint64_t blocked;             /* bit s-1: signal s was blocked */
    uint64_t limits[ZY_NLIMITS][2];
} zy_fixed;

enum { ZY_REFUSED = 1, ZY_STARTED, ZY_EXITED, ZY_SIGNALED };

typedef struct {
    int32_t kind, value;
} zy_reply;

/* Reads exactly n bytes from fd (retrying interrupted reads); 0 on success. */
static inline int zy_read_full(int fd, void *p, size_t n) {
    char *c = p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Sends exactly n bytes on socket fd (no SIGPIPE); 0 on success. */
static inline int zy_send_full(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t r = send(fd, c, n, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

#endif
