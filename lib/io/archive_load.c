/*
 * archive_load.c - opens libarchive on first use and fills the function table
 * (see archive_load.h for why it is not linked directly).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "io/archive_load.h"

#ifndef GK_LIBARCHIVE_SONAME
#define GK_LIBARCHIVE_SONAME "libarchive.so.13"
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gk_archive_api api;
static bool loaded;
static char why[256];

/* Resolves one symbol into *slot; @return : false (and sets why) if missing. */
static bool resolve(void *lib, const char *name, void *slot) {
    void *fn = dlsym(lib, name);
    if (fn == NULL) {
        snprintf(why, sizeof why, "%s has no %s", GK_LIBARCHIVE_SONAME, name);
        return false;
    }
    memcpy(slot, &fn, sizeof fn);
    return true;
}

static void load(void) {
    void *lib = dlopen(GK_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) lib = dlopen("libarchive.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "%s", e ? e : "dlopen failed");
        return;
    }
    gk_archive_api a;
    bool ok = resolve(lib, "archive_read_new", &a.read_new) &&
              resolve(lib, "archive_read_support_filter_all", &a.read_support_filter_all) &&
              resolve(lib, "archive_read_support_format_all", &a.read_support_format_all) &&
              resolve(lib, "archive_read_open_filename", &a.read_open_filename) &&
              resolve(lib, "archive_read_next_header", &a.read_next_header) &&
              resolve(lib, "archive_read_data", &a.read_data) &&
              resolve(lib, "archive_read_free", &a.read_free) &&
              resolve(lib, "archive_error_string", &a.error_string) &&
              resolve(lib, "archive_entry_pathname", &a.entry_pathname) &&
              resolve(lib, "archive_entry_size", &a.entry_size) &&
              resolve(lib, "archive_entry_size_is_set", &a.entry_size_is_set) &&
              resolve(lib, "archive_entry_filetype", &a.entry_filetype);
    if (!ok) {
        dlclose(lib);
        return;
    }
    api = a;
    loaded = true;   /* the library stays loaded for the life of the process */
}

const gk_archive_api *gk_archive_api_load(gk_error *err) {
    pthread_once(&load_once, load);
    if (loaded) return &api;
    gk_error_set(err, GK_E_UNSUPPORTED, -1, "archive support is not available: cannot load libarchive (%s)",
                 why);
    return NULL;
}
