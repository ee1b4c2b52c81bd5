/*
 * report_read.c - reads report.json (docs/report-schema.md) back into a par_report: the one reader every renderer,
 * the diff, the merge and `parity report` go through.
 *
 * Every field the writer (report_json.c) writes is read, checked for its type and range, and copied into memory the
 * document owns; an error names the file, the JSON path and the reason, and nothing is half-read (the document is
 * freed). Strings are copied as valid UTF-8 (invalid sequences become U+FFFD; one-line fields get control
 * characters escaped) and cut to the record's fixed fields at a character boundary, as records from a worker are.
 * The "summary" object is not read: it is recomputed from the records by whoever writes or renders. The "campaign"
 * object of a fuzzing campaign's report is not read either (its records are read as any run's).
 *
 * This file must not judge anything, nor write anything.
 */
#include "report_read.h"

#include "core/requant.h"
#include "oracle/oracle.h"           /* par_metrics_init */
#include "reference/conv_winograd.h" /* par_algo_name */

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct par_report_doc {
    char *path;
    par_report r;
    par_env env;
    par_report_selection sel;
    par_backend *tables;          /* [n_backends]: identity only (name, description, version, arith), no procs */
    par_backend_inst *backends;
    par_report_case *cases;
    par_result *results;          /* [n_cases * n_backends] */
    par_report_shard *shards;
    const char **paths;           /* selection paths */
    char **pool;                  /* every string the document copied */
    size_t n_pool, cap_pool;
};

typedef struct rd {
    par_report_doc *d;
    par_msg *msg;
    int bad;                      /* 1 after the first error (the message names it) */
    int oom;
} rd;

/* ---------------------------------------------------------------------------------------------------------------
 * Errors and strings
 * ------------------------------------------------------------------------------------------------------------- */

static void fail(rd *x, const char *where, const char *key, const char *fmt, ...)
{
    if (x->bad) return;
    x->bad = 1;
    char why[PAR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    par_msgf(x->msg, PAR_ERROR, "%s: %s%s%s: %s", x->d->path, where, (where[0] && key) ? "." : "", key ? key : "",
             why);
}

static const char *pool_dup(rd *x, const char *s)
{
    if (x->bad) return NULL;
    par_report_doc *d = x->d;
    if (d->n_pool == d->cap_pool) {
        size_t cap = d->cap_pool ? 2 * d->cap_pool : 64;
        char **p = realloc(d->pool, cap * sizeof *p);
        if (!p) goto oom;
        d->pool = p;
        d->cap_pool = cap;
    }
    size_t n = strlen(s) + 1;
    char *c = malloc(n * 3 + 1); /* U+FFFD replacements can triple an invalid string */
    if (!c) goto oom;
    par_text_clean(c, n * 3 + 1, s, n, 0);
    d->pool[d->n_pool++] = c;
    return c;
oom:
    x->bad = x->oom = 1;
    par_msgf(x->msg, PAR_ERROR, "%s: out of memory", d->path);
    return NULL;
}

static const char *type_name(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return "null";
    case json_type_boolean: return "a boolean";
    case json_type_double: return "a number";
    case json_type_int: return "an integer";
    case json_type_object: return "an object";
    case json_type_array: return "an array";
    case json_type_string: return "a string";
    }
    return "something else";
}

/* ---------------------------------------------------------------------------------------------------------------
 * Typed getters: opt 1 means an absent field (or null) takes the default; opt 0 means it must be there.
 * ------------------------------------------------------------------------------------------------------------- */

static json_object *field(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = NULL;
    if (x->bad) return NULL;
    if (!json_object_object_get_ex(o, key, &v) && !opt) fail(x, where, key, "missing");
    return v;
}

static json_object *get_obj(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = field(x, o, where, key, opt);
    if (!v) return NULL;
    if (!json_object_is_type(v, json_type_object)) {
        fail(x, where, key, "is %s, expected an object", type_name(v));
        return NULL;
    }
    return v;
}

static json_object *get_arr(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = field(x, o, where, key, opt);
    if (!v) return NULL;
    if (!json_object_is_type(v, json_type_array)) {
        fail(x, where, key, "is %s, expected an array", type_name(v));
        return NULL;
    }
    return v;
}

/* A string into the pool; *out NULL when absent or null (and opt). */
static void get_str(rd *x, json_object *o, const char *where, const char *key, int opt, const char **out)
{
    *out = NULL;
    json_object *v = field(x, o, where, key, opt);
    if (!v) return;
    if (!json_object_is_type(v, json_type_string)) {
        fail(x, where, key, "is %s, expected a string", type_name(v));
        return;
    }
    *out = pool_dup(x, json_object_get_string(v));
}

/* A string into a fixed field (cut at a character boundary; one_line escapes control characters). */
static void get_buf(rd *x, json_object *o, const char *where, const char *key, int opt, char *buf, size_t cap,
                    int one_line)
{
    buf[0] = '\0';
    json_object *v = field(x, o, where, key, opt);
    if (!v) return;
    if (!json_object_is_type(v, json_type_string)) {
        fail(x, where, key, "is %s, expected a string", type_name(v));
        return;
    }
    const char *s = json_object_get_string(v);
    par_text_clean(buf, cap, s, strlen(s) + 1, one_line);
}

/* A key that must fit its fixed field whole (labels and case IDs are matched, so cutting one would change it). */
static void get_key(rd *x, json_object *o, const char *where, const char *key, char *buf, size_t cap)
{
    buf[0] = '\0';
    json_object *v = field(x, o, where, key, 0);
    if (!v) return;
    if (!json_object_is_type(v, json_type_string)) {
        fail(x, where, key, "is %s, expected a string", type_name(v));
        return;
    }
    const char *s = json_object_get_string(v);
    if (!s[0]) fail(x, where, key, "is empty");
    else if (strlen(s) >= cap) fail(x, where, key, "is %zu bytes long, more than %zu", strlen(s), cap - 1);
    else if (par_text_clean(buf, cap, s, strlen(s) + 1, 1)) fail(x, where, key, "is not valid UTF-8 on one line");
}

static void get_i64(rd *x, json_object *o, const char *where, const char *key, int opt, int64_t lo, int64_t hi,
                    int64_t dflt, int64_t *out)
{
    *out = dflt;
    json_object *v = field(x, o, where, key, opt);
    if (!v || (opt && json_object_is_type(v, json_type_null))) return;
    if (!json_object_is_type(v, json_type_int)) {
        fail(x, where, key, "is %s, expected an integer", type_name(v));
        return;
    }
    errno = 0;
    int64_t n = json_object_get_int64(v);
    if (errno || n < lo || n > hi) {
        fail(x, where, key, "%s is out of range [%lld, %lld]", json_object_to_json_string(v), (long long)lo,
             (long long)hi);
        return;
    }
    *out = n;
}

static void get_i32(rd *x, json_object *o, const char *where, const char *key, int opt, int32_t lo, int32_t hi,
                    int32_t dflt, int32_t *out)
{
    int64_t v;
    get_i64(x, o, where, key, opt, lo, hi, dflt, &v);
    *out = (int32_t)v;
}

/* A number; null (or absent, when opt) reads as NaN: the writer writes every non-finite double as null. */
static void get_num(rd *x, json_object *o, const char *where, const char *key, int opt, double *out)
{
    *out = NAN;
    json_object *v = field(x, o, where, key, opt);
    if (!v || json_object_is_type(v, json_type_null)) return;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
        fail(x, where, key, "is %s, expected a number", type_name(v));
        return;
    }
    *out = json_object_get_double(v);
    if (!isfinite(*out)) fail(x, where, key, "is not a finite number");
}

/* A number that must be there and finite, or null read as dflt. */
static double get_num_or(rd *x, json_object *o, const char *where, const char *key, int opt, double dflt)
{
    double v;
    get_num(x, o, where, key, opt, &v);
    return isnan(v) ? dflt : v;
}

static int get_bool(rd *x, json_object *o, const char *where, const char *key, int opt, int dflt)
{
    json_object *v = field(x, o, where, key, opt);
    if (!v || (opt && json_object_is_type(v, json_type_null))) return dflt;
    if (!json_object_is_type(v, json_type_boolean)) {
        fail(x, where, key, "is %s, expected true or false", type_name(v));
        return dflt;
    }
    return json_object_get_boolean(v) != 0;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Top level: the harness, the environment, the config
 * ------------------------------------------------------------------------------------------------------------- */

static void read_env(rd *x, json_object *e, const char *where, par_env *env)
{
    memset(env, 0, sizeof *env);
    if (!e) return;
    char w[64];
    snprintf(w, sizeof w, "%s.cpu", where);
    json_object *cpu = get_obj(x, e, where, "cpu", 1), *os = get_obj(x, e, where, "os", 1);
    if (cpu) {
        get_buf(x, cpu, w, "model", 1, env->cpu_model, sizeof env->cpu_model, 1);
        get_i32(x, cpu, w, "cores", 1, 0, 1 << 20, 0, &env->cores);
        json_object *f = get_arr(x, cpu, w, "features", 1);
        size_t o = 0;
        for (size_t i = 0; f && !x->bad && i < json_object_array_length(f); i++) {
            json_object *s = json_object_array_get_idx(f, i);
            if (!json_object_is_type(s, json_type_string)) {
                char k[32];
                snprintf(k, sizeof k, "features[%zu]", i);
                fail(x, w, k, "is %s, expected a string", type_name(s));
                break;
            }
            int n = snprintf(env->cpu_features + o, sizeof env->cpu_features - o, "%s%s", o ? " " : "",
                             json_object_get_string(s));
            if (n < 0 || (size_t)n >= sizeof env->cpu_features - o) break;
            o += (size_t)n;
        }
    }
    if (os) {
        snprintf(w, sizeof w, "%s.os", where);
        get_buf(x, os, w, "name", 1, env->os_name, sizeof env->os_name, 1);
        get_buf(x, os, w, "release", 1, env->os_release, sizeof env->os_release, 1);
        get_buf(x, os, w, "version", 1, env->os_version, sizeof env->os_version, 1);
        get_buf(x, os, w, "machine", 1, env->machine, sizeof env->machine, 1);
    }
    get_buf(x, e, where, "compiler", 1, env->compiler, sizeof env->compiler, 1);
    get_buf(x, e, where, "json_c", 1, env->json_c, sizeof env->json_c, 1);
}

/* "K/N" (or null: 0/0). */
static void read_shard(rd *x, json_object *o, const char *where, const char *key, int32_t *k, int32_t *n)
{
    const char *s;
    *k = *n = 0;
    get_str(x, o, where, key, 1, &s);
    if (!s) return;
    int a, b;
    char tail;
    if (sscanf(s, "%d/%d%c", &a, &b, &tail) != 2 || b < 1 || a < 1 || a > b)
        fail(x, where, key, "\"%s\" is not K/N with 1 <= K <= N", s);
    else *k = a, *n = b;
}

static void read_config(rd *x, json_object *root)
{
    par_report *r = &x->d->r;
    json_object *cfg = get_obj(x, root, "", "config", 0);
    if (!cfg) return;
    json_object *seed = field(x, cfg, "config", "seed", 0);
    if (seed && !json_object_is_type(seed, json_type_int)) fail(x, "config", "seed", "is %s, expected an integer",
                                                                type_name(seed));
    else if (seed) r->seed = json_object_get_uint64(seed);
    get_i32(x, cfg, "config", "repeat", 0, 0, 1 << 30, 0, &r->repeat);
    get_i32(x, cfg, "config", "warmup", 0, 0, 1 << 30, 0, &r->warmup);
    get_i32(x, cfg, "config", "jobs", 0, 0, 1 << 20, 0, &r->jobs);
    r->timeout_s = get_num_or(x, cfg, "config", "timeout_s", 0, 0);
    par_report_selection *sel = &x->d->sel;
    json_object *s = get_obj(x, cfg, "config", "selection", 1);
    if (s) {
        get_str(x, s, "config.selection", "suite", 1, &sel->suite);
        get_str(x, s, "config.selection", "case", 1, &sel->case_id);
        get_str(x, s, "config.selection", "ops", 1, &sel->ops);
        get_str(x, s, "config.selection", "filter", 1, &sel->filter);
        json_object *p = get_arr(x, s, "config.selection", "paths", 1);
        size_t np = p ? json_object_array_length(p) : 0;
        if (np && !x->bad) {
            x->d->paths = calloc(np, sizeof *x->d->paths);
            if (!x->d->paths) x->bad = x->oom = 1;
        }
        for (size_t i = 0; i < np && !x->bad; i++) {
            json_object *e = json_object_array_get_idx(p, i);
            if (!json_object_is_type(e, json_type_string)) {
                char k[32];
                snprintf(k, sizeof k, "paths[%zu]", i);
                fail(x, "config.selection", k, "is %s, expected a string", type_name(e));
            } else {
                x->d->paths[i] = pool_dup(x, json_object_get_string(e));
                sel->n_paths = (int32_t)i + 1;
            }
        }
        sel->paths = x->d->paths;
    }
    read_shard(x, cfg, "config", "shard", &sel->shard_k, &sel->shard_n);
    r->sel = *sel;
}

static void read_shards(rd *x, json_object *root)
{
    json_object *a = get_arr(x, root, "", "shards", 1);
    size_t n = a ? json_object_array_length(a) : 0;
    if (!n || x->bad) return;
    x->d->shards = calloc(n, sizeof *x->d->shards);
    if (!x->d->shards) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < n && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "shards[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) {
            fail(x, w, NULL, "is %s, expected an object", type_name(o));
            break;
        }
        par_report_shard *sh = &x->d->shards[i];
        read_shard(x, o, w, "shard", &sh->k, &sh->n);
        get_str(x, o, w, "path", 1, &sh->path);
        get_str(x, o, w, "created", 1, &sh->created);
        get_str(x, o, w, "command_line", 1, &sh->command_line);
        get_str(x, o, w, "git_revision", 1, &sh->git_revision);
        sh->wall_s = get_num_or(x, o, w, "wall_s", 1, 0);
        get_i32(x, o, w, "cases", 1, 0, INT32_MAX, 0, &sh->n_cases);
        char we[48];
        snprintf(we, sizeof we, "%s.environment", w);
        read_env(x, get_obj(x, o, w, "environment", 1), we, &sh->env);
    }
    x->d->r.n_shards = (int32_t)n;
    x->d->r.shards = x->d->shards;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Backends and cases
 * ------------------------------------------------------------------------------------------------------------- */

static par_arith arith_of(const char *s, int *ok)
{
    *ok = 1;
    if (!s || !strcmp(s, "f32")) return PAR_ARITH_F32;
    if (!strcmp(s, "f16_storage")) return PAR_ARITH_F16_STORAGE;
    if (!strcmp(s, "f16")) return PAR_ARITH_F16;
    *ok = 0;
    return PAR_ARITH_F32;
}

static void read_backend(rd *x, json_object *o, const char *w, par_backend *t, par_backend_inst *bi)
{
    get_key(x, o, w, "label", bi->label, sizeof bi->label);
    const char *name, *version, *desc, *arith, *rq, *plugin;
    get_str(x, o, w, "name", 1, &name);
    get_str(x, o, w, "version", 1, &version);
    get_str(x, o, w, "description", 1, &desc);
    get_str(x, o, w, "arith", 1, &arith);
    int ok;
    t->arith = arith_of(arith, &ok);
    if (!ok) fail(x, w, "arith", "\"%s\" is not f32, f16_storage or f16", arith);
    t->api_version = PAR_BACKEND_API_VERSION;
    t->struct_size = sizeof *t;
    t->name = name ? name : "";
    t->version = version ? version : "";
    t->description = desc ? desc : "";
    bi->be = name ? t : NULL;
    json_object *knobs = get_obj(x, o, w, "knobs", 1);
    if (knobs && !x->bad) {
        json_object_object_foreach(knobs, k, v)
        {
            if (bi->n_knobs == PAR_MAX_KNOBS) {
                fail(x, w, "knobs", "more than %d knobs", PAR_MAX_KNOBS);
                break;
            }
            if (!json_object_is_type(v, json_type_string)) {
                fail(x, w, "knobs", "knob '%s' is %s, expected a string", k, type_name(v));
                break;
            }
            par_text_clean(bi->knob_key[bi->n_knobs], sizeof bi->knob_key[0], k, strlen(k) + 1, 1);
            const char *s = json_object_get_string(v);
            par_text_clean(bi->knob_val[bi->n_knobs], sizeof bi->knob_val[0], s, strlen(s) + 1, 1);
            bi->n_knobs++;
        }
    }
    get_buf(x, o, w, "describe", 1, bi->describe, sizeof bi->describe, 0);
    get_str(x, o, w, "plugin", 1, &plugin);
    if (plugin) snprintf(bi->plugin_path, sizeof bi->plugin_path, "%s", plugin);
    get_str(x, o, w, "requant", 1, &rq);
    if (rq) {
        par_requant s;
        if (par_requant_parse(rq, &s) != 0) fail(x, w, "requant", "\"%s\" is not a requantization scheme", rq);
        bi->requant = (int32_t)s;
        bi->probed = 1;
    }
    bi->requant_exact = get_bool(x, o, w, "requant_exact", 1, 0);
    json_object *flags = get_arr(x, o, w, "arith_flags", 1);
    for (size_t i = 0; flags && !x->bad && i < json_object_array_length(flags); i++) {
        const char *f = json_object_get_string(json_object_array_get_idx(flags, i));
        for (uint32_t bit = 1; f && bit; bit <<= 1) /* a flag this build does not know is ignored */
            if (par_arith_flag_name(bit) && !strcmp(par_arith_flag_name(bit), f)) bi->arith_flags |= bit;
    }
    bi->usable = get_bool(x, o, w, "usable", 0, 0);
    get_buf(x, o, w, "reason", 1, bi->unusable_reason, sizeof bi->unusable_reason, 1);
}

static void read_backends(rd *x, json_object *root)
{
    par_report_doc *d = x->d;
    json_object *a = get_arr(x, root, "", "backends", 0);
    size_t n = a ? json_object_array_length(a) : 0;
    if (x->bad) return;
    if (n > PAR_MAX_KNOBS * 64) {
        fail(x, "", "backends", "%zu backends: more than this build reads", n);
        return;
    }
    d->tables = calloc(n ? n : 1, sizeof *d->tables);
    d->backends = calloc(n ? n : 1, sizeof *d->backends);
    if (!d->tables || !d->backends) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < n && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "backends[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) {
            fail(x, w, NULL, "is %s, expected an object", type_name(o));
            break;
        }
        read_backend(x, o, w, &d->tables[i], &d->backends[i]);
        for (size_t j = 0; j < i && !x->bad; j++)
            if (!strcmp(d->backends[j].label, d->backends[i].label))
                fail(x, w, "label", "\"%s\" is also backends[%zu]'s label", d->backends[i].label, j);
    }
    d->r.n_backends = (int32_t)n;
    d->r.backends = d->backends;
}

/* Case IDs -> index: open addressing over FNV-1a, so that 100,000 records find their case in linear time. */
typedef struct id_map {
    int32_t *slot;                /* case index + 1, 0 empty */
    size_t mask;
} id_map;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int map_init(id_map *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    m->slot = calloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    return m->slot ? 0 : -1;
}

/* The index of id, or -1; with add >= 0, inserts it (returns the existing index when already there). */
static int32_t map_find(const id_map *m, const par_report_case *cases, const char *id, int32_t add)
{
    for (size_t h = (size_t)fnv1a(id) & m->mask;; h = (h + 1) & m->mask) {
        int32_t s = m->slot[h];
        if (!s) {
            if (add >= 0) m->slot[h] = add + 1;
            return -1;
        }
        if (!strcmp(cases[s - 1].id, id)) return s - 1;
    }
}

static void read_cases(rd *x, json_object *root, id_map *map)
{
    par_report_doc *d = x->d;
    json_object *a = get_arr(x, root, "", "cases", 0);
    size_t n = a ? json_object_array_length(a) : 0;
    if (x->bad) return;
    if (n > INT32_MAX / 64) {
        fail(x, "", "cases", "%zu cases: more than this build reads", n);
        return;
    }
    d->cases = calloc(n ? n : 1, sizeof *d->cases);
    if (!d->cases || map_init(map, n)) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < n && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "cases[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) {
            fail(x, w, NULL, "is %s, expected an object", type_name(o));
            break;
        }
        par_report_case *c = &d->cases[i];
        get_key(x, o, w, "id", c->id, sizeof c->id);
        get_buf(x, o, w, "origin", 0, c->origin, sizeof c->origin, 1);
        get_buf(x, o, w, "ops", 0, c->ops, sizeof c->ops, 1);
        get_buf(x, o, w, "dtype", 1, c->dtype, sizeof c->dtype, 1);
        get_i64(x, o, w, "index", 1, 0, INT64_MAX, (int64_t)i, &c->index);
        int32_t prev = x->bad ? -1 : map_find(map, d->cases, c->id, (int32_t)i);
        if (prev >= 0) fail(x, w, "id", "\"%s\" is also cases[%d]'s ID", c->id, (int)prev);
    }
    d->r.n_cases = (int32_t)n;
    d->r.cases = d->cases;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Records
 * ------------------------------------------------------------------------------------------------------------- */

static void read_quant(rd *x, json_object *q, const char *w, par_metrics *m)
{
    static const char *const keys[PAR_HIST_BINS] = {"<=-3", "-2", "-1", "0", "+1", "+2", ">=+3"};
    m->quant = 1;
    get_i64(x, q, w, "n_exact", 0, 0, INT64_MAX, 0, &m->n_exact);
    get_i64(x, q, w, "n_labelled", 0, 0, INT64_MAX, 0, &m->n_labelled);
    json_object *h = get_obj(x, q, w, "step_histogram", 0);
    char wh[96];
    snprintf(wh, sizeof wh, "%s.step_histogram", w);
    for (int k = 0; h && k < PAR_HIST_BINS; k++) get_i64(x, h, wh, keys[k], 0, 0, INT64_MAX, 0, &m->hist[k]);
    m->bias_bound = get_num_or(x, q, w, "bias_bound", 1, 0);
    m->bias_over = get_bool(x, q, w, "bias_over", 1, 0);
}

static void read_ties(rd *x, json_object *t, const char *w, par_metrics *m)
{
    get_i64(x, t, w, "n", 0, 0, INT64_MAX, 0, &m->tie_n);
    for (int k = 0; k < PAR_TIE_RULES; k++)
        get_i64(x, t, w, par_tie_rule_name((par_tie_rule)k), 0, 0, m->tie_n, 0, &m->tie_rule_n[k]);
    get_i64(x, t, w, "other", 0, 0, m->tie_n, 0, &m->tie_other);
    const char *decl;
    get_str(x, t, w, "declared", 1, &decl);
    m->tie_declared = -1;
    for (int k = 0; decl && k < PAR_TIE_RULES; k++)
        if (!strcmp(decl, par_tie_rule_name((par_tie_rule)k))) m->tie_declared = k;
    if (decl && m->tie_declared < 0) fail(x, w, "declared", "\"%s\" is not a tie rule", decl);
    m->tie_over = get_bool(x, t, w, "contradicts", 1, 0);
}

static void read_metrics(rd *x, json_object *o, const char *w, par_metrics *m)
{
    get_i64(x, o, w, "n", 0, 0, INT64_MAX, 0, &m->n);
    get_i64(x, o, w, "n_over", 0, 0, INT64_MAX, 0, &m->n_over);
    get_i64(x, o, w, "n_nonfinite", 0, 0, INT64_MAX, 0, &m->n_nonfinite);
    get_i64(x, o, w, "n_unbounded", 1, 0, INT64_MAX, 0, &m->n_unbounded);
    get_num(x, o, w, "max_abs", 0, &m->max_abs);
    get_num(x, o, w, "max_rel", 0, &m->max_rel);
    get_num(x, o, w, "max_ulp", 0, &m->max_ulp);
    get_num(x, o, w, "nmse", 0, &m->nmse);
    get_num(x, o, w, "bias", 0, &m->bias);
    get_num(x, o, w, "max_ratio", 0, &m->max_ratio);
    if (isnan(m->max_ratio) && get_bool(x, o, w, "max_ratio_infinite", 1, 0)) m->max_ratio = INFINITY;
    char ws[96];
    json_object *q = get_obj(x, o, w, "quant", 1), *t = get_obj(x, o, w, "ties", 1);
    snprintf(ws, sizeof ws, "%s.quant", w);
    if (q) read_quant(x, q, ws, m);
    snprintf(ws, sizeof ws, "%s.ties", w);
    if (t) read_ties(x, t, ws, m);
}

static void read_worst(rd *x, json_object *o, const char *w, par_metrics *m)
{
    get_i32(x, o, w, "output", 0, 0, INT32_MAX, 0, &m->worst_output);
    get_i64(x, o, w, "index", 0, 0, INT64_MAX, -1, &m->worst_index);
    json_object *c = get_arr(x, o, w, "coords", 0);
    size_t n = c ? json_object_array_length(c) : 0;
    if (n > PAR_MAX_RANK) fail(x, w, "coords", "%zu coordinates, more than %d", n, PAR_MAX_RANK);
    for (size_t i = 0; i < n && !x->bad; i++) {
        json_object *e = json_object_array_get_idx(c, i);
        if (!json_object_is_type(e, json_type_int)) fail(x, w, "coords", "element %zu is not an integer", i);
        m->worst_coords[i] = json_object_get_int64(e);
    }
    m->worst_rank = (int32_t)n;
    get_num(x, o, w, "reference", 0, &m->worst_ref);
    get_num(x, o, w, "backend", 0, &m->worst_got);
    const char *cls;
    get_str(x, o, w, "backend_class", 1, &cls);
    if (cls && !strcmp(cls, "inf")) m->worst_got = INFINITY;
    get_num(x, o, w, "budget", 0, &m->worst_budget);
}

static void read_timing(rd *x, json_object *o, const char *w, par_timing *t)
{
    get_i32(x, o, w, "runs", 0, 0, INT32_MAX, 0, &t->runs);
    t->prepare_ms = get_num_or(x, o, w, "prepare_ms", 0, 0);
    t->run_median_ms = get_num_or(x, o, w, "run_median_ms", 1, 0);
    t->run_p10_ms = get_num_or(x, o, w, "run_p10_ms", 1, 0);
    t->run_p90_ms = get_num_or(x, o, w, "run_p90_ms", 1, 0);
    t->run_min_ms = get_num_or(x, o, w, "run_min_ms", 1, 0);
    json_object *s = get_arr(x, o, w, "samples_ms", 1);
    size_t n = s ? json_object_array_length(s) : 0;
    if (n > PAR_TIMING_SAMPLES || (int64_t)n > t->runs)
        fail(x, w, "samples_ms", "%zu samples of %d runs (at most %d are kept)", n, (int)t->runs, PAR_TIMING_SAMPLES);
    for (size_t i = 0; i < n && !x->bad; i++) {
        json_object *e = json_object_array_get_idx(s, i);
        if (!json_object_is_type(e, json_type_int) && !json_object_is_type(e, json_type_double))
            fail(x, w, "samples_ms", "element %zu is %s, expected a number", i, type_name(e));
        t->samples_ms[i] = json_object_get_double(e);
        if (!(t->samples_ms[i] >= 0) || !isfinite(t->samples_ms[i]))
            fail(x, w, "samples_ms", "element %zu is not a time", i);
    }
    t->n_samples = (int32_t)n;
}

/* "algorithms" / "node_schemes": {"count", "nodes": [{"node", "name", key}]} with value names looked up. */
static void read_decls(rd *x, json_object *o, const char *w, const char *key, int algos, int32_t *n_out,
                       par_result_decl *list)
{
    int64_t count;
    get_i64(x, o, w, "count", 0, 0, INT32_MAX, 0, &count);
    *n_out = (int32_t)count;
    json_object *nodes = get_arr(x, o, w, "nodes", 0);
    size_t n = nodes ? json_object_array_length(nodes) : 0;
    if ((int64_t)n > count || n > PAR_RESULT_ALGOS) fail(x, w, "nodes", "%zu nodes listed for a count of %lld", n,
                                                          (long long)count);
    for (size_t i = 0; i < n && !x->bad; i++) {
        char wn[128];
        snprintf(wn, sizeof wn, "%s.nodes[%zu]", w, i);
        json_object *e = json_object_array_get_idx(nodes, i);
        if (!json_object_is_type(e, json_type_object)) {
            fail(x, wn, NULL, "is %s, expected an object", type_name(e));
            break;
        }
        get_i32(x, e, wn, "node", 0, 0, INT32_MAX, 0, &list[i].node);
        get_buf(x, e, wn, "name", 1, list[i].node_name, sizeof list[i].node_name, 1);
        const char *v;
        get_str(x, e, wn, key, 0, &v);
        list[i].value = -1;
        if (v && algos) {
            for (int32_t a = 1; a < PAR_ALGO_COUNT; a++)
                if (par_algo_name(a) && !strcmp(par_algo_name(a), v)) list[i].value = a;
        } else if (v) {
            par_requant s;
            if (par_requant_parse(v, &s) == 0) list[i].value = (int32_t)s;
        }
        if (v && list[i].value < 0) fail(x, wn, key, "\"%s\" is not known to this build", v);
    }
}

static void read_record(rd *x, json_object *o, const char *w, const id_map *map)
{
    par_report_doc *d = x->d;
    char cid[PAR_ID_LEN], label[128];
    get_key(x, o, w, "case", cid, sizeof cid);
    get_key(x, o, w, "backend", label, sizeof label);
    if (x->bad) return;
    int32_t c = map_find(map, d->cases, cid, -1), b = par_report_find_backend(&d->r, label);
    if (c < 0) return fail(x, w, "case", "\"%s\" is not in cases", cid);
    if (b < 0) return fail(x, w, "backend", "\"%s\" is not in backends", label);
    par_result *res = &d->results[(size_t)c * (size_t)d->r.n_backends + (size_t)b];
    if (res->done) return fail(x, w, NULL, "a second record of case \"%s\" on backend %s", cid, label);
    par_metrics_init(&res->m);
    res->done = 1;
    snprintf(res->case_dtype, sizeof res->case_dtype, "%s", d->cases[c].dtype);
    const char *v;
    get_str(x, o, w, "verdict", 0, &v);
    int found = 0;
    for (int k = 0; v && k < PAR_V_COUNT; k++)
        if (!strcmp(v, par_verdict_name((par_verdict)k))) res->verdict = (par_verdict)k, found = 1;
    if (v && !found) return fail(x, w, "verdict", "\"%s\" is not a verdict", v);
    get_buf(x, o, w, "reason", 0, res->reason, sizeof res->reason, 1);
    char ws[96];
    json_object *m = get_obj(x, o, w, "metrics", 1), *wo = get_obj(x, o, w, "worst", 1);
    snprintf(ws, sizeof ws, "%s.metrics", w);
    if (m) read_metrics(x, m, ws, &res->m);
    snprintf(ws, sizeof ws, "%s.worst", w);
    if (wo) read_worst(x, wo, ws, &res->m);
    json_object *t = get_obj(x, o, w, "timing", 0);
    snprintf(ws, sizeof ws, "%s.timing", w);
    if (t) read_timing(x, t, ws, &res->t);
    get_buf(x, o, w, "output", 1, res->output, sizeof res->output, 0);
    get_i64(x, o, w, "output_bytes", 1, 0, INT64_MAX, 0, &res->output_bytes);
    get_i64(x, o, w, "output_dropped", 1, 0, INT64_MAX, 0, &res->output_dropped);
    json_object *al = get_obj(x, o, w, "algorithms", 1), *ns = get_obj(x, o, w, "node_schemes", 1);
    snprintf(ws, sizeof ws, "%s.algorithms", w);
    if (al) read_decls(x, al, ws, "algorithm", 1, &res->n_algos, res->algos);
    snprintf(ws, sizeof ws, "%s.node_schemes", w);
    if (ns) read_decls(x, ns, ws, "scheme", 0, &res->n_requants, res->requants);
}

static void read_results(rd *x, json_object *root, const id_map *map)
{
    par_report_doc *d = x->d;
    json_object *a = get_arr(x, root, "", "results", 0);
    if (x->bad) return;
    size_t n = (size_t)d->r.n_cases * (size_t)d->r.n_backends;
    d->results = calloc(n ? n : 1, sizeof *d->results);
    if (!d->results) {
        x->bad = x->oom = 1;
        return;
    }
    for (size_t i = 0; i < json_object_array_length(a) && !x->bad; i++) {
        char w[32];
        snprintf(w, sizeof w, "results[%zu]", i);
        json_object *o = json_object_array_get_idx(a, i);
        if (!json_object_is_type(o, json_type_object)) fail(x, w, NULL, "is %s, expected an object", type_name(o));
        else read_record(x, o, w, map);
    }
    d->r.results = d->results;
}

/* ---------------------------------------------------------------------------------------------------------------
 * The file
 * ------------------------------------------------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len, par_msg *msg)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        par_msgf(msg, PAR_ERROR, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    if (f != stdin) fclose(f);
    if (!buf) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory reading it", path);
        return NULL;
    }
    if (err) {
        free(buf);
        par_msgf(msg, PAR_ERROR, "%s: read error", path);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Parse text; on error the message gives the line and column. */
static json_object *parse(const char *path, const char *text, size_t len, par_msg *msg)
{
    if (len == 0) {
        par_msgf(msg, PAR_ERROR, "%s: empty file, not a report", path);
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok) {
        par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok, text, (int)(len > INT32_MAX ? INT32_MAX : len));
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (!root || e != json_tokener_success) {
        size_t at = e == json_tokener_continue ? len : end, line = 1, col = 1;
        for (size_t i = 0; i < at && i < len; i++) {
            if (text[i] == '\n') line++, col = 1;
            else col++;
        }
        par_msgf(msg, PAR_ERROR, "%s: line %zu, column %zu: %s", path, line, col,
                 e == json_tokener_continue ? "the JSON ends early (truncated file?)" : json_tokener_error_desc(e));
        json_object_put(root);
        root = NULL;
    } else {
        while (end < len && (text[end] == ' ' || text[end] == '\n' || text[end] == '\r' || text[end] == '\t')) end++;
        if (end < len) {
            par_msgf(msg, PAR_ERROR, "%s: text after the report's closing brace", path);
            json_object_put(root);
            root = NULL;
        }
    }
    json_tokener_free(tok);
    return root;
}

par_status par_report_read(const char *path, par_report_doc **out, par_msg *msg)
{
    *out = NULL;
    size_t len = 0;
    char *text = slurp(path, &len, msg);
    if (!text) return PAR_ERROR;
    json_object *root = parse(path, text, len, msg);
    free(text);
    if (!root) return PAR_ERROR;
    par_report_doc *d = calloc(1, sizeof *d);
    rd x = {.d = d, .msg = msg};
    id_map map = {0};
    if (!d || !(d->path = strdup(path))) {
        free(d);
        json_object_put(root);
        return par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
    }
    const char *schema;
    int32_t version;
    if (!json_object_is_type(root, json_type_object)) fail(&x, "", NULL, "is %s, not a report object",
                                                           type_name(root));
    get_str(&x, root, "", "schema", 0, &schema);
    if (!x.bad && strcmp(schema, PAR_REPORT_SCHEMA) != 0)
        fail(&x, "", "schema", "\"%s\" is not \"%s\"", schema, PAR_REPORT_SCHEMA);
    get_i32(&x, root, "", "version", 0, 0, INT32_MAX, 0, &version);
    if (!x.bad && version != PAR_REPORT_VERSION)
        fail(&x, "", "version", "%d: this build reads version %d", (int)version, PAR_REPORT_VERSION);
    par_report *r = &d->r;
    get_str(&x, root, "", "created", 1, &r->created);
    get_str(&x, root, "", "command_line", 1, &r->command_line);
    json_object *par = get_obj(&x, root, "", "parity", 1);
    if (par) {
        get_str(&x, par, "parity", "version", 1, &r->parity_version);
        get_str(&x, par, "parity", "git_revision", 1, &r->git_revision);
        get_str(&x, par, "parity", "executable", 1, &r->parity_exe);
    }
    read_env(&x, get_obj(&x, root, "", "environment", 1), "environment", &d->env);
    r->env = &d->env;
    read_config(&x, root);
    r->wall_s = get_num_or(&x, root, "", "wall_s", 1, 0);
    r->interrupted = get_bool(&x, root, "", "interrupted", 1, 0);
    read_shards(&x, root);
    read_backends(&x, root);
    read_cases(&x, root, &map);
    read_results(&x, root, &map);
    free(map.slot);
    json_object_put(root);
    if (x.bad) {
        if (x.oom && !msg->text[0]) par_msgf(msg, PAR_ERROR, "%s: out of memory", path);
        par_report_doc_free(d);
        return PAR_ERROR;
    }
    if (!r->parity_exe) r->parity_exe = "parity";
    if (!r->command_line) r->command_line = "";
    *out = d;
    return PAR_OK;
}

const par_report *par_report_doc_report(const par_report_doc *d)
{
    return d ? &d->r : NULL;
}

const char *par_report_doc_path(const par_report_doc *d)
{
    return d ? d->path : NULL;
}

void par_report_doc_free(par_report_doc *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n_pool; i++) free(d->pool[i]);
    free(d->pool);
    free(d->paths);
    free(d->tables);
    free(d->backends);
    free(d->cases);
    free(d->results);
    free(d->shards);
    free(d->path);
    free(d);
}

int32_t par_report_find_backend(const par_report *r, const char *label)
{
    for (int32_t b = 0; r && label && b < r->n_backends; b++)
        if (!strcmp(r->backends[b].label, label)) return b;
    return -1;
}

int32_t par_report_find_case(const par_report *r, const char *id)
{
    for (int32_t c = 0; r && id && c < r->n_cases; c++)
        if (!strcmp(r->cases[c].id, id)) return c;
    return -1;
}

const par_result *par_report_record(const par_report *r, int32_t c, int32_t b)
{
    if (!r || c < 0 || b < 0 || c >= r->n_cases || b >= r->n_backends || !r->results) return NULL;
    const par_result *res = &r->results[(size_t)c * (size_t)r->n_backends + (size_t)b];
    return res->done ? res : NULL;
}
