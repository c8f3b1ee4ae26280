/*
 * names.h - the symbol names of lib/shared. Its sources are compiled twice:
 * into the library, where their functions are hidden gk_ symbols, and into
 * the command (meson defines GK_SHARED_IN_CMD there), where they are renamed
 * cmd_ so that no object of the command names a symbol of the library's
 * that the library does not export. The source text is the same.
 */
#ifndef GK_SHARED_NAMES_H
#define GK_SHARED_NAMES_H

#ifdef GK_SHARED_IN_CMD
#define gk_json_u64 cmd_json_u64
#define gk_json_i64 cmd_json_i64
#define gk_json_double cmd_json_double
#define gk_dynlib_load cmd_dynlib_load
#endif

#endif
