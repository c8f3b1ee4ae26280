/*
 * error.c - status names and the caller-owned error report.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ggufkit.h"

static const char *const status_names[GK_STATUS_COUNT] = {
    [GK_OK] = "ok",
    [GK_E_IO] = "io",
    [GK_E_NOMEM] = "out-of-memory",
    [GK_E_ARG] = "bad-argument",
    [GK_E_NOT_FOUND] = "not-found",
    [GK_E_TYPE_MISMATCH] = "type-mismatch",
    [GK_E_EXISTS] = "exists",
    [GK_E_SAME_FILE] = "same-file",
    [GK_E_UNSUPPORTED] = "unsupported",
    [GK_E_MAGIC] = "bad-magic",
    [GK_E_VERSION] = "bad-version",
    [GK_E_TRUNCATED] = "truncated",
    [GK_E_COUNT] = "count-too-large",
    [GK_E_VALUE_TYPE] = "bad-value-type",
    [GK_E_BOOL] = "bad-bool",
    [GK_E_UTF8] = "bad-utf8",
    [GK_E_EMPTY_KEY] = "empty-key",
    [GK_E_DUP_KEY] = "duplicate-key",
    [GK_E_NESTING] = "nesting-too-deep",
    [GK_E_ALIGN_TYPE] = "alignment-type",
    [GK_E_ALIGN_VALUE] = "alignment-value",
    [GK_E_EMPTY_NAME] = "empty-tensor-name",
    [GK_E_DUP_TENSOR] = "duplicate-tensor",
    [GK_E_NDIMS] = "too-many-dims",
    [GK_E_DIM] = "bad-dimension",
    [GK_E_DIM_OVERFLOW] = "dimension-overflow",
    [GK_E_TENSOR_TYPE] = "unknown-tensor-type",
    [GK_E_TENSOR_TYPE_RETIRED] = "retired-tensor-type",
    [GK_E_ROW_BLOCK] = "row-not-whole-blocks",
    [GK_E_OFFSET_ALIGN] = "misaligned-offset",
    [GK_E_DATA_EOF] = "data-past-eof",
    [GK_E_OVERLAP] = "overlapping-tensors",
    [GK_E_STRING_TOO_LONG] = "string-too-long",
    [GK_E_CORRUPT] = "corrupt",
    [GK_E_INTERRUPTED] = "interrupted",
    [GK_E_LOCKED] = "locked",
    [GK_E_JOURNAL] = "interrupted-edit",
};

const char *gk_status_name(gk_status s) {
    if ((unsigned)s >= GK_STATUS_COUNT || status_names[s] == NULL) return "unknown";
    return status_names[s];
}

void gk_error_clear(gk_error *err) {
    if (err == NULL) return;
    err->code = GK_OK;
    err->rule = GK_RULE_SPEC;
    err->offset = -1;
    err->message[0] = '\0';
    err->file[0] = '\0';
}

void gk_error_about(gk_error *err, const char *path) {
    if (err != NULL) snprintf(err->file, sizeof err->file, "%s", path ? path : "");
}

gk_status gk_error_set(gk_error *err, gk_status code, int64_t offset, const char *fmt, ...) {
    if (err == NULL) return code;
    err->code = code;
    err->rule = GK_RULE_SPEC;
    err->offset = offset;
    err->file[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}
