/*
 * case_json.h - private to the reader of the case file format (core/case_json.c: the document and entry points;
 * case_json_util.c: the primitives below; case_json_tensor.c: inputs and constants; case_json_graph.c: nodes; the
 * duplicate-key check they share with the report reader is core/json_dupkeys.c): the
 * reader state, JSON paths, the first error of a parse as "<origin>: <JSON path>: <reason>", and typed getters that
 * check the JSON type and the range and name the path. Each returns 1, or 0 with the error recorded, so checks read
 * `if (!par_cj_get_str(...)) return 0;`.
 *
 * Nothing outside the case_json*.c files may include it: the public interface is core/case.h.
 */
#ifndef PAR_CASE_JSON_H
#define PAR_CASE_JSON_H

#include <json-c/json.h>

#include "json_type.h"

#include "case.h"

typedef struct jpath {
    char s[256];
} jpath;

typedef struct reader {
    const char *origin;
    par_msg *msg;
    int failed;
    int64_t total; /* elements of all inputs and constants so far */
} reader;

/* The path extended by ".key" (key cut to 80 bytes) or by "[i]". */
jpath par_cj_pkey(const jpath *base, const char *key);
jpath par_cj_pidx(const jpath *base, size_t i);

/* A user string made safe for a one-line message, in buf (n bytes). */
const char *par_cj_san(const char *s, char *buf, size_t n);

/* Record the first error (later ones are consequences) and return 0. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int par_cj_perr(reader *r, const jpath *path, const char *fmt, ...);

/* "a string", "an array", ...: the JSON type of v for a message. */

/* 1 if key is present (its value, possibly JSON null = NULL, in *v); records no error. */
int par_cj_has(json_object *o, const char *key, json_object **v);
int par_cj_want(reader *r, json_object *v, json_type t, const jpath *path, const char *what);
/* Reject any key of o not in the NULL-terminated list allowed. */
int par_cj_check_keys(reader *r, json_object *o, const jpath *path, const char *const *allowed);

int par_cj_get_str(reader *r, json_object *v, const jpath *path, const char **out);
int par_cj_get_i64(reader *r, json_object *v, const jpath *path, int64_t lo, int64_t hi, int64_t *out);
int par_cj_get_seed(reader *r, json_object *v, const jpath *path, uint64_t *out);
int par_cj_get_num(reader *r, json_object *v, const jpath *path, double *out); /* finite */
int par_cj_get_num_or_inf(reader *r, json_object *v, const jpath *path, double *out); /* or "inf" / "-inf" */
int par_cj_get_scale(reader *r, json_object *v, const jpath *path, float *out);
int par_cj_get_dtype(reader *r, json_object *v, const jpath *path, par_dtype *out);

int par_cj_is_quant_dtype(par_dtype dt); /* qu8, qs8, i32 */
void par_cj_int_limits(par_dtype dt, int64_t *lo, int64_t *hi);

/* One input (is_const 0) or constant (1) of the document (an object at path), added to c. */
int par_cj_parse_tensor(reader *r, par_case *c, json_object *o, const jpath *path, int is_const);

/* One node of the document (an object at path), added to c's graph. */
int par_cj_parse_node(reader *r, par_case *c, json_object *o, const jpath *path);

#endif
