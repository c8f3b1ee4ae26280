/*
 * spm.c - SentencePiece model files (spm.h): the bytes read whole (they are
 * small), unpacked by protobuf-c with the generated spm_model.pb-c decoder, and
 * every piece checked (text present, a kind the format defines).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert/spm.h"
#include "spm_model.pb-c.h"

struct gk_spm {
    Gkspm__Model *model;
};

static gk_status about(gk_error *err, gk_status code, const char *path) {
    gk_error_about(err, path);
    return code;
}

/* Reads the whole file at path (at most GK_SPM_MAX_BYTES). */
static gk_status read_whole(const char *path, uint8_t **out, size_t *len, gk_error *err) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return about(err, gk_error_set(err, errno == ENOENT ? GK_E_NOT_FOUND : GK_E_IO, -1, "cannot open: %s",
                                       strerror(errno)), path);
    struct stat sb;
    gk_status s = GK_OK;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > GK_SPM_MAX_BYTES)
        s = about(err, gk_error_set(err, GK_E_CORRUPT, -1, "not a regular file of at most %u bytes", GK_SPM_MAX_BYTES),
                  path);
    else if ((*out = malloc(sb.st_size ? (size_t)sb.st_size : 1)) == NULL)
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    else if (pread(fd, *out, (size_t)sb.st_size, 0) != sb.st_size)
        s = about(err, gk_error_set(err, GK_E_IO, -1, "cannot read: %s", strerror(errno)), path);
    close(fd);
    if (s != GK_OK) {
        free(*out);
        *out = NULL;
    }
    *len = (size_t)sb.st_size;
    return s;
}

gk_status gk_spm_load(const char *path, gk_spm **out, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    *out = NULL;
    uint8_t *bytes;
    size_t len = 0;
    gk_status s = read_whole(path, &bytes, &len, err);
    if (s != GK_OK) return s;
    Gkspm__Model *m = gkspm__model__unpack(NULL, len, bytes);
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
