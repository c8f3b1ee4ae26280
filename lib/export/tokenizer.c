/*
 * tokenizer.c - the tokenizer files of an export, from the GGUF's
 * tokenizer.* keys: for a BPE vocabulary ("gpt2") tokenizer.json (bpe.c);
 * for a SentencePiece vocabulary (tokenizer.ggml.model "llama") tokenizer.model, packed by protobuf-c from convert's schema
 * (pieces with their scores and kinds, a BPE trainer spec with the special
 * ids, an identity normalizer with the dummy prefix the GGUF asks for); and
 * tokenizer_config.json: add_bos/add_eos/add_sep, the special tokens' text, the chat
 * template, add_prefix_space, and the added tokens (user-defined ones, and
 * control tokens with the score convert gives added ones) so that convert
 * reads the same token types back. An added token that replaced a piece of
 * the model gets a stand-in piece in tokenizer.model (stand_ins), so that the
 * file still loads in SentencePiece.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "spm_model.pb-c.h"
#include "util/hashmap.h"

typedef struct vocab {
    const gk_str *tokens;
    const float *scores;
    const int32_t *types;
    size_t n;
} vocab;

static gk_status load_vocab(const gk_model *m, vocab *v, gk_error *err) {
    memset(v, 0, sizeof *v);
    const gk_value *t = gk_kv_get(m, "tokenizer.ggml.tokens");
    if (t == NULL) return GK_OK;
    if (t->type != GK_V_ARR || t->arr.elem != GK_V_STR)
        return gk_error_set(err, GK_E_CORRUPT, -1, "tokenizer.ggml.tokens is not an array of strings");
    v->tokens = t->arr.data;
    v->n = (size_t)t->arr.n;
    const gk_value *s = gk_kv_get(m, "tokenizer.ggml.scores"), *ty = gk_kv_get(m, "tokenizer.ggml.token_type");
    if (s && (s->type != GK_V_ARR || s->arr.elem != GK_V_F32 || s->arr.n != v->n))
        return gk_error_set(err, GK_E_CORRUPT, -1, "tokenizer.ggml.scores is not %zu F32 values (one per token)", v->n);
    if (ty && (ty->type != GK_V_ARR || ty->arr.elem != GK_V_I32 || ty->arr.n != v->n))
        return gk_error_set(err, GK_E_CORRUPT, -1, "tokenizer.ggml.token_type is not %zu I32 values (one per token)",
                            v->n);
    v->scores = s ? s->arr.data : NULL;
    v->types = ty ? ty->arr.data : NULL;
    return GK_OK;
}

static int32_t type_of(const vocab *v, size_t i) { return v->types ? v->types[i] : 1; }
static float score_of(const vocab *v, size_t i) { return v->scores ? v->scores[i] : 0.0f; }

/* Whether token i is one convert took from the added tokens (user-defined,
 * or control with the score it gives them): tokenizer_config.json's
 * added_tokens_decoder carries it back. */
static bool is_added(const vocab *v, size_t i) {
    int32_t t = type_of(v, i);
    return t == 4 || (t == 3 && score_of(v, i) == -1000.0f);
}

static int32_t id_of(const gk_model *m, const char *key) {
    uint64_t id;
    return gk_kv_get_uint(m, key, &id) == GK_OK && id <= INT32_MAX ? (int32_t)id : -1;
}

bool gk_exp_kv_bool(const gk_model *m, const char *key, bool *b) {
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL || v->type != GK_V_BOOL) return false;
    *b = v->b;
    return true;
}

/* Where an added token replaced a piece of the SentencePiece model (its
 * added_tokens_decoder entry named an id of the base vocabulary), the GGUF no
 * longer holds that piece, and tokenizer.model must still load: pieces are
 * unique, and with byte fallback all 256 byte pieces are there. Such a token
 * gets a stand-in piece: the missing byte piece when its id lies in the byte
 * pieces' run, else a unique placeholder when its text is another piece's.
 * Converting reads the added token over it again (tokenizer_config.json), so
 * the GGUF comes back the same. ph[i] gets the stand-in's text ("" for none),
 * kind[i] its kind. @return : false when out of memory. */
static bool stand_ins(const vocab *v, char (*ph)[40], int32_t *kind) {
    bool present[256] = { false };
    int64_t start = -1;
    for (size_t i = 0; i < v->n; i++) {
        unsigned b;
        if (type_of(v, i) == 6 && sscanf(v->tokens[i].ptr, "<0x%2X>", &b) == 1 && b < 256) {
            present[b] = true;
            if (start < 0) start = (int64_t)i - (int64_t)b;
        }
    }
    gk_hashmap seen = { 0 };
    bool ok = true;
    for (size_t i = 0; ok && i < v->n; i++) {   /* the pieces kept as they are */
        if (is_added(v, i)) continue;
        ok = gk_hashmap_add(&seen, gk_fnv1a(GK_FNV1A_BASIS, v->tokens[i].ptr, v->tokens[i].len), i);
    }
    for (size_t i = 0; ok && i < v->n; i++) {
        if (!is_added(v, i)) continue;
        if (start >= 0 && (int64_t)i >= start && (int64_t)i - start < 256 && !present[i - (size_t)start]) {
            snprintf(ph[i], sizeof ph[i], "<0x%02X>", (unsigned)(i - (size_t)start));
            present[i - (size_t)start] = true;
            kind[i] = 6;
            continue;
        }
        uint64_t h = gk_fnv1a(GK_FNV1A_BASIS, v->tokens[i].ptr, v->tokens[i].len);
        size_t cur = 0, at;
        bool dup = false;
        while (!dup && gk_hashmap_next(&seen, h, &cur, &at))
            dup = v->tokens[at].len == v->tokens[i].len && memcmp(v->tokens[at].ptr, v->tokens[i].ptr, v->tokens[i].len) == 0;
        if (dup) {
            snprintf(ph[i], sizeof ph[i], "<ggufkit_added_%zu>", i);
            kind[i] = 4;
        } else {
            ok = gk_hashmap_add(&seen, h, i);
        }
    }
    gk_hashmap_free(&seen);
    return ok;
}

static gk_status spm_file(const gk_model *m, const vocab *v, gk_exp_folder *f, gk_error *err) {
    Gkspm__Model model = GKSPM__MODEL__INIT;
    Gkspm__Model__Trainer trainer = GKSPM__MODEL__TRAINER__INIT;
    Gkspm__Model__Normalizer norm = GKSPM__MODEL__NORMALIZER__INIT;
    Gkspm__Model__Piece *pieces = calloc(v->n ? v->n : 1, sizeof *pieces);
    Gkspm__Model__Piece **ptrs = calloc(v->n ? v->n : 1, sizeof *ptrs);
    char (*ph)[40] = calloc(v->n ? v->n : 1, sizeof *ph);
    int32_t *kind = calloc(v->n ? v->n : 1, sizeof *kind);
    if (pieces == NULL || ptrs == NULL || ph == NULL || kind == NULL || !stand_ins(v, ph, kind)) {
        free(pieces), free(ptrs), free(ph), free(kind);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    bool bytes = false;
    for (size_t i = 0; i < v->n; i++) {
        gkspm__model__piece__init(&pieces[i]);
        pieces[i].piece = ph[i][0] ? ph[i] : (char *)v->tokens[i].ptr;
        pieces[i].has_score = true;
        pieces[i].score = ph[i][0] ? 0.0f : score_of(v, i);
        int32_t t = ph[i][0] ? kind[i] : type_of(v, i);
        pieces[i].has_type = true;
        pieces[i].type = t >= 1 && t <= 6 ? (Gkspm__Model__Piece__Kind)t : GKSPM__MODEL__PIECE__KIND__NORMAL;
        bytes |= t == 6;
        ptrs[i] = &pieces[i];
    }
    model.n_pieces = v->n;
    model.pieces = ptrs;
    trainer.has_model_type = true;
    trainer.model_type = GKSPM__MODEL__TRAINER__ALGORITHM__BPE;
    trainer.has_vocab_size = true;
    trainer.vocab_size = (int32_t)v->n;
    trainer.has_byte_fallback = true;
    trainer.byte_fallback = bytes;
    trainer.has_unk_id = true, trainer.unk_id = id_of(m, "tokenizer.ggml.unknown_token_id");
    trainer.has_bos_id = true, trainer.bos_id = id_of(m, "tokenizer.ggml.bos_token_id");
    trainer.has_eos_id = true, trainer.eos_id = id_of(m, "tokenizer.ggml.eos_token_id");
    trainer.has_pad_id = true, trainer.pad_id = id_of(m, "tokenizer.ggml.padding_token_id");
    if (trainer.unk_id < 0) trainer.unk_id = 0;
    bool prefix = true;
    gk_exp_kv_bool(m, "tokenizer.ggml.add_space_prefix", &prefix);
    norm.name = "identity";
    norm.has_add_dummy_prefix = true, norm.add_dummy_prefix = prefix;
    norm.has_remove_extra_whitespaces = true, norm.remove_extra_whitespaces = false;
    norm.has_escape_whitespaces = true, norm.escape_whitespaces = true;
    model.trainer_spec = &trainer;
    model.normalizer_spec = &norm;
    size_t len = gkspm__model__get_packed_size(&model);
    uint8_t *buf = malloc(len ? len : 1);
    gk_status s;
    if (buf == NULL) {
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    } else {
        gkspm__model__pack(&model, buf);
        s = gk_exp_folder_write(f, "tokenizer.model", buf, len, err);
    }
    free(buf);
    free(pieces);
    free(ptrs);
    free(ph);
    free(kind);
    return s;
}

/* The text of the token with id key's value, or NULL. */
static const char *token_text(const gk_model *m, const vocab *v, const char *key) {
    int32_t id = id_of(m, key);
    return id >= 0 && (size_t)id < v->n ? v->tokens[id].ptr : NULL;
}

/* tokenizer_config.json; cls is its tokenizer_class (NULL: LlamaTokenizer for
 * SentencePiece, PreTrainedTokenizerFast for BPE). */
static gk_status config_file(const gk_model *m, const vocab *v, bool spm, const char *cls, gk_exp_folder *f,
                            gk_error *err) {
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL, b;
    if (ok && gk_exp_kv_bool(m, "tokenizer.ggml.add_bos_token", &b)) ok = cJSON_AddBoolToObject(root, "add_bos_token", b);
    if (ok && gk_exp_kv_bool(m, "tokenizer.ggml.add_eos_token", &b)) ok = cJSON_AddBoolToObject(root, "add_eos_token", b);
    if (ok && gk_exp_kv_bool(m, "tokenizer.ggml.add_sep_token", &b)) ok = cJSON_AddBoolToObject(root, "add_sep_token", b);
    if (ok && gk_exp_kv_bool(m, "tokenizer.ggml.add_space_prefix", &b)) ok = cJSON_AddBoolToObject(root, "add_prefix_space", b);
    static const struct { const char *key, *name; } texts[] = {
        { "tokenizer.ggml.bos_token_id", "bos_token" }, { "tokenizer.ggml.eos_token_id", "eos_token" },
        { "tokenizer.ggml.unknown_token_id", "unk_token" }, { "tokenizer.ggml.padding_token_id", "pad_token" },
    };
    for (size_t i = 0; ok && i < sizeof texts / sizeof texts[0]; i++) {
        const char *t = token_text(m, v, texts[i].key);
        if (t) ok = cJSON_AddStringToObject(root, texts[i].name, t) != NULL;
    }
    gk_str tmpl;
    if (ok && gk_kv_get_str(m, "tokenizer.chat_template", &tmpl) == GK_OK)
        ok = cJSON_AddStringToObject(root, "chat_template", tmpl.ptr) != NULL;
    cJSON *dec = NULL;
    for (size_t i = 0; ok && spm && i < v->n; i++) {
        int32_t t = type_of(v, i);
        if (!is_added(v, i)) continue;
        if (dec == NULL && (dec = cJSON_AddObjectToObject(root, "added_tokens_decoder")) == NULL) break;
        char id[24];
        snprintf(id, sizeof id, "%zu", i);
        cJSON *e = cJSON_AddObjectToObject(dec, id);
        ok = e && cJSON_AddStringToObject(e, "content", v->tokens[i].ptr) && cJSON_AddBoolToObject(e, "special", t == 3);
    }
    if (ok) ok = cJSON_AddStringToObject(root, "tokenizer_class",
                                         cls ? cls : spm ? "LlamaTokenizer" : "PreTrainedTokenizerFast");
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = gk_exp_folder_write_text(f, "tokenizer_config.json", text, err);
    free(text);
    return s;
}

gk_status gk_exp_tokenizer(const gk_model *m, gk_exp_folder *f, const char **written, gk_error *err) {
    *written = "none";
    vocab v;
    gk_status s = load_vocab(m, &v, err);
    if (s != GK_OK || v.n == 0) return s;
    gk_str model = { "", 0 };
    gk_kv_get_str(m, "tokenizer.ggml.model", &model);
    if (strcmp(model.ptr, "llama") == 0) {
        s = spm_file(m, &v, f, err);
        if (s == GK_OK) s = config_file(m, &v, true, NULL, f, err);
        if (s == GK_OK) *written = "tokenizer.model, tokenizer_config.json";
        return s;
    }
    if (strcmp(model.ptr, "gpt2") != 0) return GK_OK;   /* bert, rwkv ...: not written */
    gk_str pre = { "default", 7 };
    gk_kv_get_str(m, "tokenizer.ggml.pre", &pre);
    const char *cls = NULL;
    bool known = gk_exp_bpe_known(pre.ptr, &cls);
    if (known) s = gk_exp_bpe(m, pre.ptr, f, err);
    if (s == GK_OK) s = config_file(m, &v, false, cls, f, err);
    if (s == GK_OK)
        *written = known ? "tokenizer.json, tokenizer_config.json"
                         : "tokenizer_config.json (no tokenizer.json: its pre-tokenizer is not one export knows)";
    return s;
}
