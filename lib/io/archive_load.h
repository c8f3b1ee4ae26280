/*
 * archive_load.h - libarchive, loaded when an archive is first read.
 *
 * libarchive brings a dozen shared libraries with it (XML, ICU, compressors,
 * C++ runtime), whose loading doubles the start-up time of every ggufkit
 * command although only archive members need them. The library is therefore
 * opened on first use (shared/dynlib.h); its functions are reached through the
 * table below, typed from <archive.h> itself and named as there.
 */
#ifndef GK_IO_ARCHIVE_LOAD_H
#define GK_IO_ARCHIVE_LOAD_H

#include <archive.h>
#include <archive_entry.h>

#include "ggufkit.h"
#include "shared/dynlib.h"

/* The libarchive functions ggufkit uses. */
#define GK_ARCHIVE_FUNCS(X)                                                                      \
    X(archive_read_new) X(archive_read_support_filter_all) X(archive_read_support_format_all)   \
    X(archive_read_open_filename) X(archive_read_next_header) X(archive_read_data)              \
    X(archive_read_free) X(archive_error_string) X(archive_entry_pathname) X(archive_entry_size) \
    X(archive_entry_size_is_set) X(archive_entry_filetype) X(archive_read_data_skip)

typedef struct gk_archive_api {
    GK_ARCHIVE_FUNCS(GK_DYNLIB_SLOT)
} gk_archive_api;

/** gk_archive_api_load() : loads libarchive once per process (thread-safe).
 *  @return : the function table, or NULL with err set to GK_E_UNSUPPORTED
 *            saying why the library could not be loaded. */
const gk_archive_api *gk_archive_api_load(gk_error *err);

#endif
