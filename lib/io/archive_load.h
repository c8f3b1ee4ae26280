/*
 * archive_load.h - libarchive, loaded when an archive is first read.
 *
 * libarchive brings a dozen shared libraries with it (XML, ICU, compressors,
 * C++ runtime), whose loading doubles the start-up time of every ggufkit
 * command although only archive members need them. The library is therefore
 * opened with dlopen() on first use; its functions are reached through the
 * table below, typed from <archive.h> itself.
 */
#ifndef GK_IO_ARCHIVE_LOAD_H
#define GK_IO_ARCHIVE_LOAD_H

#include <archive.h>
#include <archive_entry.h>

#include "ggufkit.h"

/* The libarchive functions ggufkit uses. */
typedef struct gk_archive_api {
    __typeof__(archive_read_new) *read_new;
    __typeof__(archive_read_support_filter_all) *read_support_filter_all;
    __typeof__(archive_read_support_format_all) *read_support_format_all;
    __typeof__(archive_read_open_filename) *read_open_filename;
    __typeof__(archive_read_next_header) *read_next_header;
    __typeof__(archive_read_data) *read_data;
    __typeof__(archive_read_free) *read_free;
    __typeof__(archive_error_string) *error_string;
    __typeof__(archive_entry_pathname) *entry_pathname;
    __typeof__(archive_entry_size) *entry_size;
    __typeof__(archive_entry_size_is_set) *entry_size_is_set;
    __typeof__(archive_entry_filetype) *entry_filetype;
} gk_archive_api;

/** gk_archive_api_load() : loads libarchive once per process (thread-safe).
 *  @return : the function table, or NULL with err set to GK_E_UNSUPPORTED
 *            saying why the library could not be loaded. */
const gk_archive_api *gk_archive_api_load(gk_error *err);

#endif
