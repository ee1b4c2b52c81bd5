/*
 * report_read_get.c - the report reader's errors, strings and typed getters (report_read_int.h): each checks a
 * field's type and range and, on the first problem, writes the message naming the file, the JSON path and the reason;
 * the field tables (rr_fields: an object's fields read from one list of key, type, range and place); and the lookups of cases and backends (the reader's hash map of case IDs, the public linear lookups).
 */
#include "report_read_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------
 * Errors and strings
 * ------------------------------------------------------------------------------------------------------------- */

void rr_fail(rd *x, const char *where, const char *key, const char *fmt, ...)
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

const char *rr_dup(rd *x, const char *s)
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

/* ---------------------------------------------------------------------------------------------------------------
 * Typed getters: opt 1 means an absent field (or null) takes the default; opt 0 means it must be there.
 * ------------------------------------------------------------------------------------------------------------- */

/* The value of key in o, or NULL when absent or null. An absent field is an error unless opt; a null one unless opt
 * or null_ok (a number the writer wrote as null: not finite). want names the expected type in the message. */
static json_object *get(rd *x, json_object *o, const char *where, const char *key, int opt, int null_ok,
                        const char *want)
{
    json_object *v = NULL;
    if (x->bad) return NULL;
    if (!json_object_object_get_ex(o, key, &v)) {
        if (!opt) rr_fail(x, where, key, "missing (expected %s)", want);
        return NULL;
    }
    if (!v && !opt && !null_ok) rr_fail(x, where, key, "is null, expected %s", want);
    return v;
}

/* v (not NULL) is of JSON type t, or the error names what it is. */
static int is(rd *x, json_object *v, json_type t, const char *where, const char *key, const char *want)
{
    if (json_object_is_type(v, t) || (t == json_type_double && json_object_is_type(v, json_type_int))) return 1;
    rr_fail(x, where, key, "is %s, expected %s", par_json_type_name(v), want);
    return 0;
}

json_object *rr_field(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    return get(x, o, where, key, opt, 0, "a value");
}

json_object *rr_obj(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = get(x, o, where, key, opt, 0, "an object");
    return v && is(x, v, json_type_object, where, key, "an object") ? v : NULL;
}

json_object *rr_arr(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = get(x, o, where, key, opt, 0, "an array");
    return v && is(x, v, json_type_array, where, key, "an array") ? v : NULL;
}

/* A string into the pool; *out NULL when absent or null (and opt). */
void rr_str(rd *x, json_object *o, const char *where, const char *key, int opt, const char **out)
{
    *out = NULL;
    json_object *v = get(x, o, where, key, opt, 0, "a string");
    if (v && is(x, v, json_type_string, where, key, "a string")) *out = rr_dup(x, json_object_get_string(v));
}

/* A string into a fixed field (cut at a character boundary; one_line escapes control characters). */
void rr_buf(rd *x, json_object *o, const char *where, const char *key, int opt, char *buf, size_t cap, int one_line)
{
    buf[0] = '\0';
    json_object *v = get(x, o, where, key, opt, 0, "a string");
    if (!v || !is(x, v, json_type_string, where, key, "a string")) return;
    const char *s = json_object_get_string(v);
    par_text_clean(buf, cap, s, strlen(s) + 1, one_line);
}

/* A key that must fit its fixed field whole (labels and case IDs are matched, so cutting one would change it). */
void rr_key(rd *x, json_object *o, const char *where, const char *key, char *buf, size_t cap)
{
    buf[0] = '\0';
    json_object *v = get(x, o, where, key, 0, 0, "a string");
    if (!v || !is(x, v, json_type_string, where, key, "a string")) return;
    const char *s = json_object_get_string(v);
    if (!s[0]) rr_fail(x, where, key, "is empty");
    else if (strlen(s) >= cap) rr_fail(x, where, key, "is %zu bytes long, more than %zu", strlen(s), cap - 1);
    else if (par_text_clean(buf, cap, s, strlen(s) + 1, 1)) rr_fail(x, where, key, "is not valid UTF-8 on one line");
}

/* An integer of v in [lo, hi]. json-c reads integers in (2^63 - 1, 2^64 - 1] as INT64_MAX (and saturates those
 * beyond 64 bits, which the reader refused before), so INT64_MIN and INT64_MAX are out of range whatever the bounds
 * (no field reaches them). */
int rr_int_of(rd *x, json_object *v, const char *where, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    if (!is(x, v, json_type_int, where, key, "an integer")) return 0;
    int64_t n = json_object_get_int64(v);
    if (n == INT64_MAX || n == INT64_MIN) {
        rr_fail(x, where, key, "%s is out of range [%lld, %lld]", json_object_to_json_string(v), (long long)lo,
                (long long)hi);
        return 0;
    }
    if (n < lo || n > hi) {
        rr_fail(x, where, key, "%lld is out of range [%lld, %lld]", (long long)n, (long long)lo, (long long)hi);
        return 0;
    }
    *out = n;
    return 1;
}

void rr_i64(rd *x, json_object *o, const char *where, const char *key, int opt, int64_t lo, int64_t hi, int64_t dflt,
            int64_t *out)
{
    *out = dflt;
    json_object *v = get(x, o, where, key, opt, 0, "an integer");
    if (v) rr_int_of(x, v, where, key, lo, hi, out);
}

void rr_i32(rd *x, json_object *o, const char *where, const char *key, int opt, int32_t lo, int32_t hi, int32_t dflt,
            int32_t *out)
{
    int64_t v;
    rr_i64(x, o, where, key, opt, lo, hi, dflt, &v);
    *out = (int32_t)v;
}

/* A number of v (not NULL): finite, and >= 0 when nonneg. */
int rr_num_of(rd *x, json_object *v, const char *where, const char *key, int nonneg, double *out)
{
    if (!is(x, v, json_type_double, where, key, "a number")) return 0;
    double d = json_object_get_double(v);
    if (!isfinite(d)) {
        rr_fail(x, where, key, "%s is not a finite number", isnan(d) ? "NaN" : d > 0 ? "+inf" : "-inf");
        return 0;
    }
    if (nonneg && d < 0) {
        rr_fail(x, where, key, "%g is negative", d);
        return 0;
    }
    *out = d;
    return 1;
}

/* A number; null (or absent, when opt) reads as NaN: the writer writes every non-finite double as null. */
void rr_num(rd *x, json_object *o, const char *where, const char *key, int opt, double *out)
{
    *out = NAN;
    json_object *v = get(x, o, where, key, opt, 1, "a number");
    if (v) rr_num_of(x, v, where, key, 0, out);
}

/* A number that must be there and finite, or null read as dflt. */
double rr_num_or(rd *x, json_object *o, const char *where, const char *key, int opt, double dflt)
{
    double v;
    rr_num(x, o, where, key, opt, &v);
    return isnan(v) ? dflt : v;
}

int rr_bool(rd *x, json_object *o, const char *where, const char *key, int opt, int dflt)
{
    json_object *v = get(x, o, where, key, opt, 0, "true or false");
    if (!v || !is(x, v, json_type_boolean, where, key, "true or false")) return dflt;
    return json_object_get_boolean(v) != 0;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Field tables: one row per field of an object, read in order into a struct
 * ------------------------------------------------------------------------------------------------------------- */

static int64_t int_at(const void *dst, const rr_spec *f)
{
    const char *p = (const char *)dst + f->off;
    if (f->kind == RR_I32) {
        int32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static const char *kind_want(rr_kind k)
{
    switch (k) {
    case RR_I64:
    case RR_I32: return "an integer";
    case RR_NUM:
    case RR_NUM0:
    case RR_TIME: return "a number";
    case RR_BOOL: return "true or false";
    default: return "a string";
    }
}

static void read_one(rd *x, json_object *o, const char *where, const rr_spec *spec, const rr_spec *f, void *dst)
{
    char *p = (char *)dst + f->off;
    if (f->kind == RR_BOUND) return;
    int null_ok = f->kind == RR_NUM || f->kind == RR_NUM0 || f->kind == RR_TIME;
    json_object *v = get(x, o, where, f->key, f->opt, null_ok, kind_want(f->kind));
    if (x->bad) return;
    double d = f->kind == RR_NUM ? NAN : 0;
    int64_t n;
    switch (f->kind) {
    case RR_I64:
    case RR_I32:
        if (!v || !rr_int_of(x, v, where, f->key, f->lo, f->hi, &n)) return;
        if (f->le && n > int_at(dst, &spec[f->le - 1])) {
            rr_fail(x, where, f->key, "%lld is more than %s (%lld)", (long long)n, spec[f->le - 1].key,
                    (long long)int_at(dst, &spec[f->le - 1]));
            return;
        }
        if (f->kind == RR_I32) {
            int32_t n32 = (int32_t)n;
            memcpy(p, &n32, sizeof n32);
        } else {
            memcpy(p, &n, sizeof n);
        }
        return;
    case RR_NUM:
    case RR_NUM0:
    case RR_TIME:
        if (v) rr_num_of(x, v, where, f->key, f->kind == RR_TIME, &d);
        memcpy(p, &d, sizeof d);
        return;
    case RR_BOOL:
        if (v && is(x, v, json_type_boolean, where, f->key, "true or false")) {
            int32_t b = json_object_get_boolean(v) != 0;
            memcpy(p, &b, sizeof b);
        }
        return;
    case RR_STR:
        if (v && is(x, v, json_type_string, where, f->key, "a string")) {
            const char *s = rr_dup(x, json_object_get_string(v));
            memcpy(p, &s, sizeof s);
        }
        return;
    case RR_LINE:
    case RR_TEXT:
        p[0] = '\0';
        if (v && is(x, v, json_type_string, where, f->key, "a string")) {
            const char *s = json_object_get_string(v);
            par_text_clean(p, f->cap, s, strlen(s) + 1, f->kind == RR_LINE);
        }
        return;
    case RR_BOUND: return;
    }
}

void rr_fields(rd *x, json_object *o, const char *where, const rr_spec *spec, size_t n, void *dst)
{
    for (size_t i = 0; i < n && !x->bad; i++) read_one(x, o, where, spec, &spec[i], dst);
}

/* ---------------------------------------------------------------------------------------------------------------
 * Lookups: case IDs through a hash map while reading; the public ones, linear, for callers
 * ------------------------------------------------------------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int rr_map_init(id_map *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    m->slot = calloc(cap, sizeof *m->slot);
    m->mask = cap - 1;
    return m->slot ? 0 : -1;
}

int32_t rr_map_find(const id_map *m, const par_report_case *cases, const char *id, int32_t add)
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
