/*
 * spm.c - SentencePiece model files (spm.h): the bytes read whole (they are
 * small; the file recorded as an input), unpacked by protobuf-c with the generated spm_model.pb-c decoder, and
 * every piece checked (text present, a kind the format defines).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert/spm.h"
#include "io/inputs.h"
#include "spm_model.pb-c.h"

struct gk_spm {
    Gkspm__Model *model;
};

static gk_status about(gk_error *err, gk_status code, const char *path) {
    gk_error_about(err, path);
    return code;
}

gk_status gk_spm_load(const char *path, gk_spm **out, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    *out = NULL;
    char *bytes;
    size_t len = 0;
    gk_status s = input_read_whole(path, GK_SPM_MAX_BYTES, &bytes, &len, err);
    if (s != GK_OK) return s;
    Gkspm__Model *m = gkspm__model__unpack(NULL, len, (const uint8_t *)bytes);
    free(bytes);
    if (m == NULL) return about(err, gk_error_set(err, GK_E_CORRUPT, -1, "not a SentencePiece model (protobuf)"), path);
    if (m->n_pieces == 0) s = about(err, gk_error_set(err, GK_E_CORRUPT, -1, "a SentencePiece model without pieces"), path);
    for (size_t i = 0; i < m->n_pieces && s == GK_OK; i++) {
        const Gkspm__Model__Piece *p = m->pieces[i];
        if (p->piece == NULL)
            s = about(err, gk_error_set(err, GK_E_CORRUPT, -1, "piece %zu has no text", i), path);
        else if (p->type < GKSPM__MODEL__PIECE__KIND__NORMAL || p->type > GKSPM__MODEL__PIECE__KIND__BYTE)
            s = about(err, gk_error_set(err, GK_E_CORRUPT, -1, "piece %zu ('%.40s') has unknown kind %d", i, p->piece,
                                        (int)p->type), path);
    }
    gk_spm *h = s == GK_OK ? malloc(sizeof *h) : NULL;
    if (s == GK_OK && h == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s != GK_OK) {
        gkspm__model__free_unpacked(m, NULL);
        return s;
    }
    h->model = m;
    *out = h;
    return GK_OK;
}

size_t gk_spm_count(const gk_spm *m) { return m->model->n_pieces; }

const char *gk_spm_piece(const gk_spm *m, size_t i) { return i < m->model->n_pieces ? m->model->pieces[i]->piece : NULL; }

float gk_spm_score(const gk_spm *m, size_t i) {
    return i < m->model->n_pieces && m->model->pieces[i]->has_score ? m->model->pieces[i]->score : 0.0f;
}

int32_t gk_spm_kind(const gk_spm *m, size_t i) {
    return i < m->model->n_pieces ? (int32_t)m->model->pieces[i]->type : GKSPM__MODEL__PIECE__KIND__NORMAL;
}

bool gk_spm_is_bpe(const gk_spm *m) {
    return m->model->trainer_spec && m->model->trainer_spec->model_type == GKSPM__MODEL__TRAINER__ALGORITHM__BPE;
}

void gk_spm_free(gk_spm *m) {
    if (m == NULL) return;
    gkspm__model__free_unpacked(m->model, NULL);
    free(m);
}
