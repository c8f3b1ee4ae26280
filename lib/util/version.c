/*
 * version.c - the version of the library loaded (ggufkit_version.h, generated
 * from meson.build's project version, is the one place it is written).
 */
#include "ggufkit.h"

const char *gk_version(void) { return GK_VERSION_STRING; }

unsigned gk_version_number(void) { return GK_VERSION_NUMBER; }
