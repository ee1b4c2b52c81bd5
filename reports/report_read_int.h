/*
 * report_read_int.h - what the parts of the report reader share (report_read.c: the file, the top level, backends
 * and cases; report_read_get.c: errors, strings and typed getters; report_read_record.c: the records). Not for
 * anything outside the reader.
 */
#ifndef PAR_REPORT_READ_INT_H
#define PAR_REPORT_READ_INT_H

#include "report_read.h"

#include <json-c/json.h>

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

/* The "results" array into the document's records (report_read_record.c). */
void rr_read_results(rd *x, json_object *root, const id_map *map);

#endif
