/*
 * lock.h - the locks that keep processes sharing one model apart.
 *
 * Two one-byte open-file-description locks (fcntl F_OFD_SETLK) on the model
 * itself, so that they belong to an open file and vanish with it, whatever
 * kills the process:
 *   GK_LOCK_EDIT (byte 1): held exclusively by a process that changes the file
 *     or replaces it (an in-place edit, a rewrite renamed over it, a journal
 *     recovery, an output replacing it), from before it reads the header until
 *     it is done. Readers never take it.
 *   GK_LOCK_HEADER (byte 0): held exclusively while header bytes are being
 *     rewritten (from writing the journal to removing it), shared by readers
 *     while they read the header. A reader holding it who finds a journal
 *     knows that its editor is gone.
 * Waits are bounded: the lock is polled until a deadline, then the caller gets
 * GK_E_LOCKED. Where the filesystem has no such locks, nothing is locked.
 */
#ifndef GK_IO_LOCK_H
#define GK_IO_LOCK_H

#include "ggufkit.h"

typedef enum gk_lock_byte { GK_LOCK_HEADER = 0, GK_LOCK_EDIT = 1 } gk_lock_byte;

/* How long a reader waits for an in-place write of the header to finish. */
#define GK_LOCK_READ_WAIT_MS 30000u

/** gk_lock_take() : locks one byte of fd (exclusive or shared), waiting up to
 *  wait_ms for other holders. Messages do not name the file (callers do).
 *  @return : GK_OK (also where the filesystem cannot lock), GK_E_LOCKED, GK_E_IO. */
gk_status gk_lock_take(int fd, gk_lock_byte byte, bool exclusive, unsigned wait_ms, gk_error *err);

/** gk_lock_drop() : releases one byte of fd's locks. */
void gk_lock_drop(int fd, gk_lock_byte byte);

/** gk_lock_open() : opens path for reading and writing holding its GK_LOCK_EDIT
 *  lock, and makes sure path still names the file locked (a process that held the
 *  lock before may have renamed another file over it: then it starts again on
 *  that one). wait_ms bounds the whole wait. A file that is not regular is
 *  refused. @return : GK_OK with *fd set, GK_E_LOCKED, GK_E_ARG (not a regular
 *  file), GK_E_NOT_FOUND, GK_E_IO (the open failed: errno in the message). */
gk_status gk_lock_open(const char *path, unsigned wait_ms, int *fd, gk_error *err);

#endif
