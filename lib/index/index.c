/*
 * index.c - `ggufkit index`: a SQLite catalogue of the GGUF files under some
 * folders (gk_index_run). This file is the run; the database is index/db.c.
 *
 * One run: the database's known files are loaded into a hash map; the folders
 * are walked (stat only); a file whose size and modification time match its
 * row is left alone (its header is not read); the others go to a pool of
 * parser threads (parse.c) whose small summaries come back through a bounded
 * queue to this thread, the only one that writes SQLite (prepared statements,
 * one transaction per batch of files). Finally, when anything changed, the
 * models table (shard sets and single files) and its quant mixes are rebuilt.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "index/db.h"
#include "io/http.h"
#include "pipeline/workers.h"
#include "util/hashmap.h"
#include "util/opts.h"

#define IX_DEFAULT_HEAD 8
#define IX_DEFAULT_BATCH 200
#define IX_QUEUE_BYTES (256u << 20)

/* ------------------------------------------------------------------------ */
/* Workers and the queue                                                    */
/* ------------------------------------------------------------------------ */

typedef struct ix_pool {
    const ix_found *jobs;
    size_t n_jobs;
    atomic_size_t next;
    atomic_bool stop;
    atomic_bool nomem;
    ix_parse_opts popts;
    pthread_mutex_t lock;
    pthread_cond_t can_put, can_take;
    ix_result *head, *tail;
    size_t queued, queued_bytes, max_items;
    int running;              /* workers not yet finished */
} ix_pool;

/* Waits for room (the queue's item and byte bounds; an empty queue takes
 * anything), then appends r. */
static void queue_put(ix_pool *p, ix_result *r) {
    pthread_mutex_lock(&p->lock);
    while (p->queued > 0 && (p->queued >= p->max_items || p->queued_bytes + r->mem_bytes > IX_QUEUE_BYTES) &&
           !atomic_load(&p->stop))
        pthread_cond_wait(&p->can_put, &p->lock);
    r->next = NULL;
    if (p->tail) p->tail->next = r;
    else p->head = r;
    p->tail = r;
    p->queued++;
    p->queued_bytes += r->mem_bytes;
    pthread_cond_signal(&p->can_take);
    pthread_mutex_unlock(&p->lock);
}

/* The next result, or NULL when every worker has finished and the queue is empty. */
static ix_result *queue_take(ix_pool *p) {
    pthread_mutex_lock(&p->lock);
    while (p->head == NULL && p->running > 0) pthread_cond_wait(&p->can_take, &p->lock);
    ix_result *r = p->head;
    if (r) {
        p->head = r->next;
        if (p->head == NULL) p->tail = NULL;
        p->queued--;
        p->queued_bytes -= r->mem_bytes;
        pthread_cond_broadcast(&p->can_put);
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

static void *worker_main(void *arg) {
    ix_pool *p = arg;
    while (!atomic_load(&p->stop)) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n_jobs) break;
        ix_result *r = ix_parse_path(p->jobs[i].path, &p->popts);
        if (r == NULL) {
            atomic_store(&p->nomem, true);
            atomic_store(&p->stop, true);
            break;
        }
        r->job = i;
        queue_put(p, r);
    }
    pthread_mutex_lock(&p->lock);
    p->running--;
    pthread_cond_broadcast(&p->can_take);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

/* @return : true when path is the database or one of its side files. */
static bool is_db_file(const char *path, const char *db_abs) {
    if (db_abs == NULL) return false;
    size_t n = strlen(db_abs);
    if (strncmp(path, db_abs, n) != 0) return false;
    const char *rest = path + n;
    return *rest == '\0' || strcmp(rest, "-wal") == 0 || strcmp(rest, "-shm") == 0 ||
           strcmp(rest, "-journal") == 0;
}

/* The absolute path the database will have (its folder resolved), or NULL. */
static char *db_absolute(const char *db_path) {
    char *abs = realpath(db_path, NULL);
    if (abs) return abs;
    const char *slash = strrchr(db_path, '/');
    char *dir = slash ? strndup(db_path, (size_t)(slash - db_path + (slash == db_path))) : strdup(".");
    char *dir_abs = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (dir_abs == NULL) return NULL;
    if (asprintf(&abs, "%s/%s", strcmp(dir_abs, "/") == 0 ? "" : dir_abs, slash ? slash + 1 : db_path) < 0)
        abs = NULL;
    free(dir_abs);
    return abs;
}

/* Parses the jobs in a pool of threads and writes their results in batches. */
static gk_status run_jobs(ix_db *d, const ix_found *jobs, size_t n_jobs, const gk_index_opts *o,
                          gk_index_stats *stats, gk_error *err) {
    ix_pool p;
    memset(&p, 0, sizeof p);
    p.jobs = jobs;
    p.n_jobs = n_jobs;
    p.popts.full_arrays = o->full_arrays;
    p.popts.hash = o->hash;
    p.popts.array_head = o->array_head ? o->array_head : IX_DEFAULT_HEAD;
    int n_threads = o->jobs > 0 ? o->jobs : gk_default_threads();
    bool remote = false;
    for (size_t i = 0; i < n_jobs && !remote; i++) remote = gk_http_is_url(jobs[i].path);
    if (remote && o->jobs <= 0 && n_threads < 8) n_threads = 8;   /* waiting on the network, not the cores */
    if ((size_t)n_threads > n_jobs) n_threads = (int)n_jobs;
    if (n_threads < 1) return GK_OK;
    p.max_items = 2 * (size_t)n_threads + 2;
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.can_put, NULL);
    pthread_cond_init(&p.can_take, NULL);
    pthread_t *threads = calloc((size_t)n_threads, sizeof *threads);
    if (threads == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    int started = 0;
    for (; started < n_threads; started++) {
        p.running++;
        if (pthread_create(&threads[started], NULL, worker_main, &p) != 0) {
            p.running--;
            break;
        }
    }
    gk_status st = started > 0 ? GK_OK : gk_error_set(err, GK_E_NOMEM, -1, "cannot start threads");
    unsigned batch = o->batch_files ? o->batch_files : IX_DEFAULT_BATCH;
    uint64_t total = 0, done = 0;
    for (size_t i = 0; i < n_jobs; i++) total += jobs[i].size;
    unsigned in_batch = 0;
    if (st == GK_OK) st = ix_db_exec(d, "BEGIN IMMEDIATE", err);
    bool in_txn = st == GK_OK;
    ix_result *r;
    while (started > 0 && (r = queue_take(&p)) != NULL) {
        if (st == GK_OK) {
            stats->headers_read += r->headers_read;
            st = ix_db_write_result(d, &jobs[r->job], r, stats, err);
            done += jobs[r->job].size;
            if (st == GK_OK && ++in_batch >= batch) {
                st = ix_db_exec(d, "COMMIT", err);
                if (st == GK_OK) st = ix_db_exec(d, "BEGIN IMMEDIATE", err);
                in_txn = st == GK_OK;
                in_batch = 0;
            }
            if (st == GK_OK && o->progress && !o->progress(o->progress_ctx, done, total))
                st = gk_error_set(err, GK_E_INTERRUPTED, -1, "interrupted");
            if (st != GK_OK) {
                atomic_store(&p.stop, true);
                pthread_mutex_lock(&p.lock);
                pthread_cond_broadcast(&p.can_put);
                pthread_mutex_unlock(&p.lock);
            }
        }
        ix_result_free(r);
    }
    for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
    free(threads);
    if (st == GK_OK && atomic_load(&p.nomem)) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    /* What was written stays written (an interrupted run keeps its progress). */
    if (in_txn) {
        gk_error cerr;
        if (ix_db_exec(d, "COMMIT", &cerr) != GK_OK && st == GK_OK) {
            *err = cerr;
            st = GK_E_IO;
        }
    }
    pthread_mutex_destroy(&p.lock);
    pthread_cond_destroy(&p.can_put);
    pthread_cond_destroy(&p.can_take);
    return st;
}

/* URLs found by the walk: their size and identity, learnt with one small
 * request each, several at a time. The identity's hash stands in for the
 * modification time, so a URL whose size and ETag (or Last-Modified) did not
 * change is not read again. A URL that cannot be probed keeps size 0: it is
 * read, and its row records the error. */
typedef struct probe_pool {
    ix_found *items;
    size_t n;
    _Atomic size_t next;
} probe_pool;

static void *probe_main(void *arg) {
    probe_pool *p = arg;
    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        ix_found *f = &p->items[i];
        if (!gk_http_is_url(f->path)) continue;
        char identity[400];
        gk_error err;
        uint64_t size;
        if (gk_http_probe(f->path, &size, identity, sizeof identity, &err) != GK_OK) {
            f->size = 0;
            f->mtime_ns = -1;   /* never matches: read again */
            continue;
        }
        f->size = size;
        f->mtime_ns = (int64_t)(gk_fnv1a(GK_FNV1A_BASIS, identity, strlen(identity)) >> 1);
    }
    return NULL;
}

static void probe_urls(ix_found_list *found, int jobs) {
    size_t n_urls = 0;
    for (size_t i = 0; i < found->n; i++) n_urls += gk_http_is_url(found->items[i].path);
    if (n_urls == 0) return;
    probe_pool p = { found->items, found->n, 0 };
    int n = jobs > 0 ? jobs : 8;   /* network-bound: more than the cores by default */
    if ((size_t)n > n_urls) n = (int)n_urls;
    pthread_t threads[64];
    if (n > 64) n = 64;
    int started = 0;
    for (; started < n; started++)
        if (pthread_create(&threads[started], NULL, probe_main, &p) != 0) break;
    if (started == 0) probe_main(&p);
    for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
}

/* Counts a path the walk leaves out and tells the caller. */
typedef struct left_out_ctx {
    const gk_index_opts *o;
    gk_index_stats *stats;
} left_out_ctx;

static void count_left_out(void *ctx, const char *path, const char *why) {
    left_out_ctx *c = ctx;
    c->stats->left_out++;
    if (c->o->left_out) c->o->left_out(c->o->left_out_ctx, path, why);
}

/* The database is written, never an input: not a PATH given (or a link to one)
 * and not a GGUF file (a model named by --db by mistake), nor anything but a
 * regular file. */
static gk_status check_db_path(const char *db_path, const char *const *paths, size_t n_paths, gk_error *err) {
    for (size_t i = 0; i < n_paths; i++) gk_inputs_add(paths[i], NULL);
    gk_status st = gk_inputs_check_output(db_path, err);
    if (st != GK_OK) return st;
    struct stat sb;
    if (stat(db_path, &sb) != 0) return GK_OK;   /* created */
    if (S_ISDIR(sb.st_mode)) return GK_OK;   /* the database's open says why */
    if (!S_ISREG(sb.st_mode))
        return gk_error_set(err, GK_E_ARG, -1, "%s: the database is not a regular file", db_path);
    int fd = open(db_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    uint8_t magic[4] = { 0 };
    bool gguf = fd >= 0 && pread(fd, magic, 4, 0) == 4 &&
                (memcmp(magic, "GGUF", 4) == 0 || memcmp(magic, "FUGG", 4) == 0);
    if (fd >= 0) close(fd);
    if (gguf)
        return gk_error_set(err, GK_E_SAME_FILE, -1,
                            "%s: is a GGUF model, not a database: refusing to write to it (name the database with --db)",
                            db_path);
    return GK_OK;
}

gk_status gk_index_run(const char *db_path, const char *const *paths, size_t n_paths, const gk_index_opts *opts,
                       gk_index_stats *stats, gk_error *err) {
    gk_index_opts defaults = { GK_OPTS_INIT(gk_index_opts) };
    const gk_index_opts *o = opts ? opts : &defaults;
    gk_index_stats local;
    if (stats == NULL) stats = &local;
    memset(stats, 0, sizeof *stats);
    gk_status sc = GK_OPTS_CHECK(o, gk_index_opts, err);
    if (sc != GK_OK) return sc;
    if (db_path == NULL || (n_paths > 0 && paths == NULL))
        return gk_error_set(err, GK_E_ARG, -1, "no database path");

    /* Walk first: a PATH that does not exist is an error before anything is written. */
    ix_found_list found = { 0 };
    gk_status st = check_db_path(db_path, paths, n_paths, err);
    if (st != GK_OK) return st;
    left_out_ctx lc = { o, stats };
    ix_walk_report rep = { count_left_out, &lc };
    for (size_t i = 0; st == GK_OK && i < n_paths; i++) st = ix_walk(paths[i], &found, &rep, err);
    if (st != GK_OK) {
        ix_found_list_free(&found);
        return st;
    }

    probe_urls(&found, o->jobs);

    ix_db d;
    if ((st = ix_db_open(&d, db_path, err)) != GK_OK) {
        ix_found_list_free(&found);
        return st;
    }
    char *db_abs = db_absolute(db_path);
    known_map known_files = { 0 };
    st = ix_db_load_known(&d, &known_files, err);

    /* Unchanged files are settled here; the rest become jobs (moved out of found). */
    ix_found *jobs = st == GK_OK ? calloc(found.n ? found.n : 1, sizeof *jobs) : NULL;
    size_t n_jobs = 0;
    if (st == GK_OK && jobs == NULL) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; st == GK_OK && i < found.n; i++) {
        ix_found *f = &found.items[i];
        if (is_db_file(f->path, db_abs)) continue;
        known *k = ix_known_find(&known_files, f->path);
        if (k && k->seen) continue;   /* the same file reached through two PATHs */
        stats->files_seen++;
        if (k) k->seen = true;
        if (k && k->size == f->size && k->mtime_ns == f->mtime_ns && !(o->hash && k->n_unhashed > 0)) {
            if (k->skipped) stats->not_gguf++;
            else stats->unchanged += k->n_rows;
            continue;
        }
        if (k == NULL && (k = ix_known_add(&known_files, f->path)) != NULL) {
            k->seen = true;
            k->n_rows = 0;
            k->skipped = false;
        }
        if (k == NULL) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        jobs[n_jobs] = *f;
        f->path = NULL;
        n_jobs++;
    }
    if (st == GK_OK && n_jobs > 0) st = run_jobs(&d, jobs, n_jobs, o, stats, err);
    if (st == GK_OK) st = ix_db_forget_vanished(&d, &known_files, o->prune, stats, err);
    bool changed = stats->added + stats->updated + stats->removed > 0 ||
                   (ix_db_count(&d, "SELECT count(*) FROM models") == 0 &&
                    ix_db_count(&d, "SELECT count(*) FROM files") > 0);
    if (st == GK_OK && changed) {
        st = ix_db_exec(&d, "BEGIN IMMEDIATE", err);
        if (st == GK_OK) st = ix_db_rebuild_models(&d, err);
        if (st == GK_OK) st = ix_db_exec(&d, "COMMIT", err);
        else ix_db_exec(&d, "ROLLBACK", &(gk_error){ 0 });
    }
    if (st == GK_OK || st == GK_E_INTERRUPTED) {
        stats->rows = (uint64_t)ix_db_count(&d, "SELECT count(*) FROM files");
        stats->models = (uint64_t)ix_db_count(&d, "SELECT count(*) FROM models");
    }
    for (size_t i = 0; i < n_jobs; i++) free(jobs[i].path);
    free(jobs);
    ix_known_free(&known_files);
    free(db_abs);
    ix_found_list_free(&found);
    ix_db_close(&d);
    return st;
}
