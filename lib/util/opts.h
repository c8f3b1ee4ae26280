/*
 * opts.h - the size check every public function taking an option struct
 * (gk_*_opts) makes before reading it: the caller's struct must be the size
 * this library knows (GK_OPTS_INIT sets it). When a struct grows, its older
 * sizes are to be accepted too, the fields past them read as zero (defaults).
 */
#ifndef GK_UTIL_OPTS_H
#define GK_UTIL_OPTS_H

#include "ggufkit.h"

/** gk_opts_size_check() : @return : GK_OK when given (the caller's size field)
 *  is known, the size of the struct named type; else GK_E_ARG saying so. */
static inline gk_status gk_opts_size_check(size_t given, size_t known, const char *type, gk_error *err) {
    if (given == known) return GK_OK;
    return gk_error_set(err, GK_E_ARG, -1,
                        "%s.size is %zu, not the %zu bytes of this library's struct: "
                        "initialize it with GK_OPTS_INIT(%s)", type, given, known, type);
}

/* Checks opts (of struct type T; NULL passes: the defaults). */
#define GK_OPTS_CHECK(opts, T, err) \
    gk_opts_size_check((opts) ? (opts)->size : sizeof(T), sizeof(T), #T, (err))

#endif
