/*
 * dynlib.c - opens a library on first use and fills its function table (see
 * dynlib.h for why some libraries are not linked directly).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dynlib.h"

/* Opens the first of lib's sonames that loads; @return : the handle or NULL (why set). */
static void *open_any(gk_dynlib *lib) {
    for (const char *const *so = lib->sonames; *so; so++) {
        void *h = dlopen(*so, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        const char *e = dlerror();
        if (lib->why[0] == '\0') snprintf(lib->why, sizeof lib->why, "%s", e ? e : "dlopen failed");
    }
    return NULL;
}

/* Fills lib's table from handle h; @return : false (why set) when a symbol is missing. */
static bool fill_table(gk_dynlib *lib, void *h) {
    size_t n = 0;
    while (lib->symbols[n]) n++;
    if (n * sizeof(void *) != lib->table_size) {
        snprintf(lib->why, sizeof lib->why, "%s: table of %zu bytes for %zu symbols", lib->label, lib->table_size, n);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        void *fn = dlsym(h, lib->symbols[i]);
        if (fn == NULL) {
            snprintf(lib->why, sizeof lib->why, "%s has no %s", lib->label, lib->symbols[i]);
            return false;
        }
        memcpy((char *)lib->table + i * sizeof fn, &fn, sizeof fn);
    }
    return true;
}

gk_status gk_dynlib_load(gk_dynlib *lib, const char *what, gk_error *err) {
    int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        pthread_mutex_lock(&lib->lock);
        state = lib->state;
        if (state == 0) {
            void *h = open_any(lib);
            if (h && !fill_table(lib, h)) {
                dlclose(h);
                h = NULL;
            }
            lib->handle = h;
            state = h ? 1 : -1;
            __atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&lib->lock);
    }
    if (state == 1) return GK_OK;
    return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s is not available: cannot load %s (%s)", what, lib->label,
                        lib->why);
}
