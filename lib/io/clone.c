/*
 * clone.c - block sharing between files (FICLONERANGE), and the probe that
 * tells whether two files can share blocks at all (see clone.h).
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fs.h>

#include "io/clone.h"

uint64_t gk_clone_block(int dst_fd) {
    struct stat sb;
    if (fstat(dst_fd, &sb) != 0 || sb.st_blksize < 512) return 4096;
    return (uint64_t)sb.st_blksize;
}

int gk_clone_range(int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t len) {
#ifdef FICLONERANGE
    struct file_clone_range r = { .src_fd = src_fd, .src_offset = src_off, .src_length = len,
                                  .dest_offset = dst_off };
    if (len == 0) return 0;   /* 0 would mean "to the end of src" */
    for (;;) {
        if (ioctl(dst_fd, FICLONERANGE, &r) == 0) return 0;
        if (errno != EINTR) return errno;
    }
#else
    (void)src_fd; (void)src_off; (void)dst_fd; (void)dst_off; (void)len;
    return EOPNOTSUPP;
#endif
}

bool gk_clone_refused(int e) {
    return e == EOPNOTSUPP || e == ENOTSUP || e == EXDEV || e == EINVAL || e == ENOTTY || e == ENOSYS ||
           e == EBADF || e == EPERM || e == ETXTBSY || e == EISDIR;
}

uint64_t gk_clone_probe(int src_fd, int dst_fd) {
    struct stat ss, ds;
    if (fstat(src_fd, &ss) != 0 || fstat(dst_fd, &ds) != 0 || !S_ISREG(ss.st_mode) || !S_ISREG(ds.st_mode))
        return 0;
    if (ds.st_size != 0) return 0;
    uint64_t block = gk_clone_block(dst_fd);
    if ((uint64_t)ss.st_size < block) return 0;
    int e = gk_clone_range(src_fd, 0, dst_fd, 0, block);
    if (e != 0) return 0;
    while (ftruncate(dst_fd, 0) != 0)
        if (errno != EINTR) return 0;   /* dst then holds one shared block: the caller must not use it */
    return block;
}
