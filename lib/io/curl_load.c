/*
 * curl_load.c - libcurl's function table, filled on first use (see
 * curl_load.h for why it is not linked directly).
 */
#include <pthread.h>

#include "io/curl_load.h"

static gk_curl_api api;
static const char *const symbols[] = {GK_CURL_FUNCS(GK_DYNLIB_NAME) NULL};
static const char *const sonames[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so", NULL};
static gk_dynlib lib = GK_DYNLIB_INIT("libcurl", sonames, symbols, &api);
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_code = -1;

static void global_init(void) { init_code = (int)api.curl_global_init(CURL_GLOBAL_DEFAULT); }

const gk_curl_api *gk_curl_api_load(gk_error *err) {
    if (gk_dynlib_load(&lib, "reading URLs", err) != GK_OK) return NULL;
    pthread_once(&once, global_init);
    if (init_code != 0) {
        gk_error_set(err, GK_E_UNSUPPORTED, -1, "reading URLs is not available: libcurl failed to initialize");
        return NULL;
    }
    return &api;
}
