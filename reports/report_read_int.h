/*
 * report_read_int.h - what the parts of the report reader share (report_read.c: the file, the top level, backends
 * and cases; report_read_get.c: errors, strings and typed getters; report_read_record.c: the records). Not for
 * anything outside the reader.
 */
#ifndef PAR_REPORT_READ_INT_H
#define PAR_REPORT_READ_INT_H

#include "report_read.h"

#include <json-c/json.h>
#include <stddef.h>

#include "core/json_type.h"

struct par_report_doc {
    char *path;
    par_report r;
    par_env env;
    par_report_selection sel;
    par_backend *tables;          /* [n_backends]: identity only (name, description, version, arith), no procs */
    par_backend_inst *backends;
    par_report_case *cases;
    par_result *results;          /* [n_cases * n_backends] */
    par_node_strip *strips;       /* NULL, or [n_cases * n_backends] once a record has a "localization" */
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

/* Case IDs -> index: open addressing over FNV-1a, so that 100,000 records find their case in linear time. */
typedef struct id_map {
    int32_t *slot;                /* case index + 1, 0 empty */
    size_t mask;
} id_map;

int rr_map_init(id_map *m, size_t n);
/* The index of id, or -1; with add >= 0, inserts it (returns the existing index when already there). */
int32_t rr_map_find(const id_map *m, const par_report_case *cases, const char *id, int32_t add);

/* The first error wins: later calls do nothing once x->bad is set. The message is "<file>: <where>.<key>: <why>". */
void rr_fail(rd *x, const char *where, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A copy the document owns, as valid UTF-8. */
const char *rr_dup(rd *x, const char *s);

/* Typed getters: opt 1 means an absent field (or null) takes the default; opt 0 means it must be there. */
json_object *rr_field(rd *x, json_object *o, const char *where, const char *key, int opt);
json_object *rr_obj(rd *x, json_object *o, const char *where, const char *key, int opt);
json_object *rr_arr(rd *x, json_object *o, const char *where, const char *key, int opt);
void rr_str(rd *x, json_object *o, const char *where, const char *key, int opt, const char **out);
void rr_buf(rd *x, json_object *o, const char *where, const char *key, int opt, char *buf, size_t cap, int one_line);
void rr_key(rd *x, json_object *o, const char *where, const char *key, char *buf, size_t cap);
void rr_i64(rd *x, json_object *o, const char *where, const char *key, int opt, int64_t lo, int64_t hi, int64_t dflt,
            int64_t *out);
void rr_i32(rd *x, json_object *o, const char *where, const char *key, int opt, int32_t lo, int32_t hi, int32_t dflt,
            int32_t *out);
void rr_num(rd *x, json_object *o, const char *where, const char *key, int opt, double *out);
double rr_num_or(rd *x, json_object *o, const char *where, const char *key, int opt, double dflt);
int rr_bool(rd *x, json_object *o, const char *where, const char *key, int opt, int dflt);

/* An integer of v (not NULL) in [lo, hi]; a number of v, finite (and >= 0 when nonneg). 1, or 0 with the error. */
int rr_int_of(rd *x, json_object *v, const char *where, const char *key, int64_t lo, int64_t hi, int64_t *out);
int rr_num_of(rd *x, json_object *v, const char *where, const char *key, int nonneg, double *out);

/* Field tables: an object's fields as one list, each row its key, what it holds, its range and where it goes (an
 * offset into the struct the caller passes), read in order by rr_fields. An optional field that is absent (or null)
 * leaves its place as the caller set it, but for numbers: RR_NUM reads as NaN, RR_NUM0 and RR_TIME as 0. */
typedef enum rr_kind {
    RR_I64,  /* int64_t in [lo, hi], and at most the earlier row le names (a count within a count) */
    RR_I32,  /* int32_t in [lo, hi], likewise */
    RR_NUM,  /* double: finite, or null (the writer's non-finite) read as NaN */
    RR_NUM0, /* double: finite, or null read as 0 */
    RR_TIME, /* double: finite and >= 0, or null read as 0 */
    RR_BOOL, /* int32_t 0 or 1 */
    RR_STR,  /* const char *: a copy in the document's pool, NULL when absent */
    RR_LINE, /* char[cap]: one line, cut at a character boundary */
    RR_TEXT, /* char[cap]: several lines */
    RR_BOUND /* int64_t read before (another table), not from this object: only a bound for the rows after it */
} rr_kind;

typedef struct rr_spec {
    const char *key;
    rr_kind kind;
    int opt;          /* 1: may be absent or null */
    size_t off;       /* offsetof the field in the destination struct */
    int64_t lo, hi;   /* RR_I64, RR_I32 */
    size_t le;        /* RR_I64, RR_I32: 1 + the index of an earlier integer row of the table bounding it, 0 none */
    size_t cap;       /* RR_LINE, RR_TEXT: sizeof the field */
} rr_spec;

/* The rows, checked at compile time against the field's size: F_INT(T, field, "key", opt, lo, hi), ... */
#define RR_SIZED(T, f, n) (offsetof(T, f) + 0 * sizeof(char[sizeof(((T *)0)->f) == (n) ? 1 : -1]))
#define F_I64(T, f, k, opt, lo, hi) {k, RR_I64, opt, RR_SIZED(T, f, 8), lo, hi, 0, 0}
#define F_I64_LE(T, f, k, opt, row) {k, RR_I64, opt, RR_SIZED(T, f, 8), 0, RR_COUNT_MAX, (row) + 1, 0}
#define F_BOUND(T, f, name) {name, RR_BOUND, 1, RR_SIZED(T, f, 8), 0, 0, 0, 0}
#define F_I32(T, f, k, opt, lo, hi) {k, RR_I32, opt, RR_SIZED(T, f, 4), lo, hi, 0, 0}
#define F_NUM(T, f, k, opt, kind) {k, kind, opt, RR_SIZED(T, f, sizeof(double)), 0, 0, 0, 0}
#define F_BOOL(T, f, k, opt) {k, RR_BOOL, opt, RR_SIZED(T, f, 4), 0, 1, 0, 0}
#define F_STR(T, f, k, opt) {k, RR_STR, opt, RR_SIZED(T, f, sizeof(char *)), 0, 0, 0, 0}
#define F_LINE(T, f, k, opt) {k, RR_LINE, opt, offsetof(T, f), 0, 0, 0, sizeof(((T *)0)->f)}
#define F_TEXT(T, f, k, opt) {k, RR_TEXT, opt, offsetof(T, f), 0, 0, 0, sizeof(((T *)0)->f)}

/* Counts of elements and indices into a tensor: at most 2^53 (no tensor comes near; doubles are exact up to there). */
#define RR_COUNT_MAX (INT64_C(1) << 53)

void rr_fields(rd *x, json_object *o, const char *where, const rr_spec *spec, size_t n, void *dst);
#define RR_FIELDS(x, o, where, table, dst) rr_fields(x, o, where, table, sizeof(table) / sizeof(table)[0], dst)

/* The "results" array into the document's records (report_read_record.c). */
void rr_read_results(rd *x, json_object *root, const id_map *map);
/* A record's "localization" (report_strip.c) into s (present set when it read); s->nodes is the caller's to free. */
void rr_read_strip(rd *x, json_object *o, const char *w, par_node_strip *s);

#endif
