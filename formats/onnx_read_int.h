/*
 * onnx_read_int.h - what the ONNX reader's three files share: onnx.c (the arena, data types, the decoder's state
 * and its building blocks: paths, errors, the counting pass, fields, submessages), onnx_decode.c (TensorProto,
 * TypeProto, ValueInfoProto, AttributeProto, NodeProto, GraphProto) and onnx_read.c (ModelProto and the entry
 * points). The helpers are par_onnx_rd_* outside these files; function-like macros keep their short names inside.
 * Internal to formats/.
 */
#ifndef PAR_FORMATS_ONNX_READ_INT_H
#define PAR_FORMATS_ONNX_READ_INT_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.h"
#include "pb.h"

/* A message type: its name, the names of its fields by number (for paths), and what the counting pass counts per
 * field number: 'm' one per occurrence (messages, strings; wire type LEN), 'v' / '4' / '8' the elements of a
 * repeated varint / fixed32 / fixed64 (packed or not), 'r' the bytes of the whole field (kept verbatim). */
typedef struct msgdef {
    const char *name;
    const char *const *fields;
    int n_fields;
    const char *kinds;
    int n_kinds;
} msgdef;

#define MAX_KIND 26 /* counts[] size: field numbers counted are below it */

typedef struct dec {
    const uint8_t *base;
    const char *origin;
    const char *root;
    par_msg *msg;
    struct par_onnx_arena *arena;
    int depth;    /* of the message being read, the root 0 */
    size_t plen;
    char path[320];
} dec;

typedef int (*decode_fn)(dec *d, const uint8_t *p, size_t n, void *obj);

#define MSGDEF(name, f, k) {name, f, (int)(sizeof f / sizeof *f), k, (int)(sizeof k / sizeof *k)}
#define MSGDEF0(name, f) {name, f, (int)(sizeof f / sizeof *f), NULL, 0}

/* A model and its arena, empty (onnx.c). */
par_onnx_model *par_onnx_rd_model_create(void);
#define model_create(...) par_onnx_rd_model_create(__VA_ARGS__)

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int par_onnx_rd_fail(dec *d, const char *field, const char *fmt, ...);
int par_onnx_rd_oom(dec *d);
void *par_onnx_rd_alloc(dec *d, size_t size);
void *par_onnx_rd_alloc_array(dec *d, int64_t n, size_t size, int *err);
int par_onnx_rd_next(dec *d, const msgdef *md, par_pb_reader *r, par_pb_field *f);
int par_onnx_rd_want(dec *d, const msgdef *md, const par_pb_field *f, par_pb_wire wire);
int par_onnx_rd_scalars(dec *d, const msgdef *md, const par_pb_field *f, par_pb_wire elem, par_pb_scalars *s,
                        size_t *count);
int par_onnx_rd_get_str(dec *d, const msgdef *md, const par_pb_field *f, const char **out);
int par_onnx_rd_get_i64(dec *d, const msgdef *md, const par_pb_field *f, int64_t *out);
int par_onnx_rd_get_i32(dec *d, const msgdef *md, const par_pb_field *f, int32_t *out);
int par_onnx_rd_count_fields(dec *d, const msgdef *md, const uint8_t *p, size_t n, int64_t counts[MAX_KIND]);
int par_onnx_rd_sub(dec *d, const char *name, int64_t index, const par_pb_field *f, decode_fn fn, void *obj);
int par_onnx_rd_once(dec *d, const msgdef *md, const par_pb_field *f, int *seen);

#define fail(...) par_onnx_rd_fail(__VA_ARGS__)
#define oom(...) par_onnx_rd_oom(__VA_ARGS__)
#define alloc(...) par_onnx_rd_alloc(__VA_ARGS__)
#define alloc_array(...) par_onnx_rd_alloc_array(__VA_ARGS__)
#define next(...) par_onnx_rd_next(__VA_ARGS__)
#define want(...) par_onnx_rd_want(__VA_ARGS__)
#define scalars(...) par_onnx_rd_scalars(__VA_ARGS__)
#define get_str(...) par_onnx_rd_get_str(__VA_ARGS__)
#define get_i64(...) par_onnx_rd_get_i64(__VA_ARGS__)
#define get_i32(...) par_onnx_rd_get_i32(__VA_ARGS__)
#define count_fields(...) par_onnx_rd_count_fields(__VA_ARGS__)
#define sub(...) par_onnx_rd_sub(__VA_ARGS__)
#define once(...) par_onnx_rd_once(__VA_ARGS__)

/* The decoders of onnx_decode.c that onnx_read.c calls: a TensorProto (obj: par_onnx_tensor), a GraphProto (obj:
 * par_onnx_graph). 0, or -1 with the error in d->msg. */
int par_onnx_rd_decode_tensor(dec *d, const uint8_t *p, size_t n, void *obj);
int par_onnx_rd_decode_graph(dec *d, const uint8_t *p, size_t n, void *obj);
#define decode_tensor par_onnx_rd_decode_tensor
#define decode_graph par_onnx_rd_decode_graph

#endif
