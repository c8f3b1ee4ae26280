/*
 * curl_load.h - libcurl, loaded when a URL is first read.
 *
 * Only remote inputs need libcurl (and its TLS, HTTP/2 and compression
 * libraries), so it is opened on first use (shared/dynlib.h) like libarchive;
 * its functions are reached through the table below, typed from <curl/curl.h>.
 */
#ifndef GK_IO_CURL_LOAD_H
#define GK_IO_CURL_LOAD_H

#define CURL_DISABLE_TYPECHECK   /* the type-checking macros would shadow the table's calls */
#include <curl/curl.h>

#include "ggufkit.h"
#include "shared/dynlib.h"

/* The libcurl functions ggufkit uses. */
#define GK_CURL_FUNCS(X)                                                                   \
    X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_perform)          \
    X(curl_easy_getinfo) X(curl_easy_cleanup) X(curl_easy_strerror) X(curl_slist_append)    \
    X(curl_slist_free_all)

typedef struct gk_curl_api {
    GK_CURL_FUNCS(GK_DYNLIB_SLOT)
} gk_curl_api;

/** gk_curl_api_load() : loads libcurl once per process (thread-safe) and
 *  initializes it. @return : the function table, or NULL with err set to
 *  GK_E_UNSUPPORTED saying why the library could not be loaded. */
const gk_curl_api *gk_curl_api_load(gk_error *err);

#endif
