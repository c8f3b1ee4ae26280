/*
 * dynlib.h - shared libraries opened on first use. lib/shared: compiled into
 * both the library (hidden) and the command (cairo for diff --plot).
 *
 * Some libraries serve one subcommand only (libarchive for archive members,
 * libcrypto for SHA digests, SQLite for the index, cairo for pictures), yet
 * linking them makes every ggufkit command load them and their dependencies
 * at start-up: milliseconds that dominate a metadata fix which clones its
 * data. Such a library is opened with dlopen() when first needed instead; its
 * functions are reached through a table typed from the library's own header.
 *
 * A table is declared with an X-macro listing the functions:
 *     #define MY_FUNCS(X) X(foo_open) X(foo_close)
 *     typedef struct { MY_FUNCS(GK_DYNLIB_SLOT) } my_api;
 *     static my_api api;
 *     static const char *const names[] = { MY_FUNCS(GK_DYNLIB_NAME) NULL };
 *     static const char *const sonames[] = { "libfoo.so.1", "libfoo.so", NULL };
 *     static gk_dynlib lib = GK_DYNLIB_INIT("libfoo", sonames, names, &api);
 *     if (gk_dynlib_load(&lib, "foo support", err) == GK_OK) api.foo_open(...);
 */
#ifndef GK_SHARED_DYNLIB_H
#define GK_SHARED_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "ggufkit.h"
#include "names.h"

/* One table field: a pointer typed like the library's function of that name. */
#define GK_DYNLIB_SLOT(name) __typeof__(name) *name;
/* One entry of the symbol list, in the order of the table's fields. */
#define GK_DYNLIB_NAME(name) #name,

/* A library to open on first use, and what became of it. */
typedef struct gk_dynlib {
    const char *label;            /* the library's name in messages */
    const char *const *sonames;   /* NULL-terminated: tried in order */
    const char *const *symbols;   /* NULL-terminated: field i of the table is symbols[i] */
    void *table;                  /* struct of function pointers, one per symbol */
    size_t table_size;            /* its size, checked against the symbol count */
    pthread_mutex_t lock;
    int state;                    /* 0 not tried, 1 loaded, -1 failed (why says why) */
    void *handle;
    char why[200];
} gk_dynlib;

#define GK_DYNLIB_INIT(label, sonames, symbols, table) \
    { (label), (sonames), (symbols), (table), sizeof *(table), PTHREAD_MUTEX_INITIALIZER, 0, NULL, "" }

/** gk_dynlib_load() : opens lib and fills its table on the first call (any
 *  thread); later calls return the first call's outcome at once. The library
 *  stays loaded for the life of the process.
 *  @return : GK_OK when every symbol was found; GK_E_UNSUPPORTED (err says
 *            that `what`, the feature needing it, is unavailable, and why the
 *            library could not be loaded). */
gk_status gk_dynlib_load(gk_dynlib *lib, const char *what, gk_error *err);

#endif
