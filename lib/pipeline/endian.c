/*
 * endian.c - byte order conversion of a whole file into a new one: a rewrite
 * (rewrite.c) of the input as its model in the other order. The header and
 * metadata are written by the writer in the chosen order, every tensor's blocks
 * go through its type's byte-swap kernel in the pipeline. The layout is
 * canonical and the end padding follows the input, so a canonical file converted
 * there and back is the same file.
 */
#include <stdlib.h>

#include "format/file.h"
#include "meta/model.h"
#include "pipeline/pipeline.h"

gk_status gk_endian_check(const gk_model *m, gk_error *err) {
    for (size_t i = 0; i < m->n_tensors; i++) {
        const gk_tensor *t = &m->tensors[i];
        const gk_type_info *ti = gk_type_get(t->type);
        if (ti == NULL)
            return gk_error_set(err, GK_E_UNSUPPORTED, t->file_offset, "tensor '%s': unknown type %u", t->name.ptr,
                                t->type);
        if (ti->byteswap == NULL)
            return gk_error_set(err, GK_E_UNSUPPORTED, t->file_offset,
                                "tensor '%s': byte order conversion of type %s is not available yet", t->name.ptr,
                                ti->name);
    }
    return GK_OK;
}

gk_status gk_endian_convert(gk_file *f, const char *dest, bool big, const gk_write_opts *opts,
                            gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    /* Refused before the types are checked, in endian's own words (gk_rewrite
     * would refuse it too, after the work of cloning). */
    if (f->path && f->path[0] && gk_same_file(f->path, dest))
        return gk_error_set(err, GK_E_SAME_FILE, -1, "%s: is the input: refusing to convert in place", dest);
    const gk_model *in = gk_file_model(f);
    gk_status s = in->big_endian != big ? gk_endian_check(in, err) : GK_OK;
    if (s != GK_OK) return s;
    gk_model *out = gk_model_clone(in);
    if (out == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_model_set_big_endian(out, big);
    s = gk_rewrite(f, out, dest, opts, err);
    gk_model_free(out);
    return s;
}
