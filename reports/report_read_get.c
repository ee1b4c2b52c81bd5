/*
 * report_read_get.c - the report reader's errors, strings and typed getters (report_read_int.h): each checks a
 * field's type and range and, on the first problem, writes the message naming the file, the JSON path and the reason;
 * and the lookups of cases and backends (the reader's hash map of case IDs, the public linear lookups).
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

json_object *rr_field(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = NULL;
    if (x->bad) return NULL;
    if (!json_object_object_get_ex(o, key, &v) && !opt) rr_fail(x, where, key, "missing");
    return v;
}

json_object *rr_obj(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = rr_field(x, o, where, key, opt);
    if (!v) return NULL;
    if (!json_object_is_type(v, json_type_object)) {
        rr_fail(x, where, key, "is %s, expected an object", par_json_type_name(v));
        return NULL;
    }
    return v;
}

json_object *rr_arr(rd *x, json_object *o, const char *where, const char *key, int opt)
{
    json_object *v = rr_field(x, o, where, key, opt);
    if (!v) return NULL;
    if (!json_object_is_type(v, json_type_array)) {
        rr_fail(x, where, key, "is %s, expected an array", par_json_type_name(v));
        return NULL;
    }
    return v;
}

/* A string into the pool; *out NULL when absent or null (and opt). */
void rr_str(rd *x, json_object *o, const char *where, const char *key, int opt, const char **out)
{
    *out = NULL;
    json_object *v = rr_field(x, o, where, key, opt);
    if (!v) return;
    if (!json_object_is_type(v, json_type_string)) {
        rr_fail(x, where, key, "is %s, expected a string", par_json_type_name(v));
        return;
    }
    *out = rr_dup(x, json_object_get_string(v));
}

/* A string into a fixed field (cut at a character boundary; one_line escapes control characters). */
void rr_buf(rd *x, json_object *o, const char *where, const char *key, int opt, char *buf, size_t cap,
                    int one_line)
{
    buf[0] = '\0';
    json_object *v = rr_field(x, o, where, key, opt);
    if (!v) return;
    if (!json_object_is_type(v, json_type_string)) {
        rr_fail(x, where, key, "is %s, expected a string", par_json_type_name(v));
        return;
    }
    const char *s = json_object_get_string(v);
    par_text_clean(buf, cap, s, strlen(s) + 1, one_line);
}

/* A key that must fit its fixed field whole (labels and case IDs are matched, so cutting one would change it). */
void rr_key(rd *x, json_object *o, const char *where, const char *key, char *buf, size_t cap)
{
    buf[0] = '\0';
    json_object *v = rr_field(x, o, where, key, 0);
    if (!v) return;
    if (!json_object_is_type(v, json_type_string)) {
        rr_fail(x, where, key, "is %s, expected a string", par_json_type_name(v));
        return;
    }
    const char *s = json_object_get_string(v);
    if (!s[0]) rr_fail(x, where, key, "is empty");
    else if (strlen(s) >= cap) rr_fail(x, where, key, "is %zu bytes long, more than %zu", strlen(s), cap - 1);
    else if (par_text_clean(buf, cap, s, strlen(s) + 1, 1)) rr_fail(x, where, key, "is not valid UTF-8 on one line");
}

void rr_i64(rd *x, json_object *o, const char *where, const char *key, int opt, int64_t lo, int64_t hi,
                    int64_t dflt, int64_t *out)
{
    *out = dflt;
    json_object *v = rr_field(x, o, where, key, opt);
    if (!v || (opt && json_object_is_type(v, json_type_null))) return;
    if (!json_object_is_type(v, json_type_int)) {
        rr_fail(x, where, key, "is %s, expected an integer", par_json_type_name(v));
        return;
    }
    errno = 0;
    int64_t n = json_object_get_int64(v);
    if (errno || n < lo || n > hi) {
        rr_fail(x, where, key, "%s is out of range [%lld, %lld]", json_object_to_json_string(v), (long long)lo,
             (long long)hi);
        return;
    }
    *out = n;
}

void rr_i32(rd *x, json_object *o, const char *where, const char *key, int opt, int32_t lo, int32_t hi,
                    int32_t dflt, int32_t *out)
{
    int64_t v;
    rr_i64(x, o, where, key, opt, lo, hi, dflt, &v);
    *out = (int32_t)v;
}

/* A number; null (or absent, when opt) reads as NaN: the writer writes every non-finite double as null. */
void rr_num(rd *x, json_object *o, const char *where, const char *key, int opt, double *out)
{
    *out = NAN;
    json_object *v = rr_field(x, o, where, key, opt);
    if (!v || json_object_is_type(v, json_type_null)) return;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
        rr_fail(x, where, key, "is %s, expected a number", par_json_type_name(v));
        return;
    }
    *out = json_object_get_double(v);
    if (!isfinite(*out)) rr_fail(x, where, key, "is not a finite number");
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
    json_object *v = rr_field(x, o, where, key, opt);
    if (!v || (opt && json_object_is_type(v, json_type_null))) return dflt;
    if (!json_object_is_type(v, json_type_boolean)) {
        rr_fail(x, where, key, "is %s, expected true or false", par_json_type_name(v));
        return dflt;
    }
    return json_object_get_boolean(v) != 0;
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
