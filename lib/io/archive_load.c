/*
 * archive_load.c - libarchive's function table, filled on first use (see
 * archive_load.h for why it is not linked directly).
 */
#include "io/archive_load.h"

#ifndef GK_LIBARCHIVE_SONAME
#define GK_LIBARCHIVE_SONAME "libarchive.so.13"
#endif

static gk_archive_api api;
static const char *const symbols[] = {GK_ARCHIVE_FUNCS(GK_DYNLIB_NAME) NULL};
static const char *const sonames[] = {GK_LIBARCHIVE_SONAME, "libarchive.so", NULL};
static gk_dynlib lib = GK_DYNLIB_INIT("libarchive", sonames, symbols, &api);

const gk_archive_api *gk_archive_api_load(gk_error *err) {
    return gk_dynlib_load(&lib, "archive support", err) == GK_OK ? &api : NULL;
}
