/*
 * tflite_import_int.h - what the TFLite importer's three files share: the driver (tflite_import.c: the subgraph,
 * operator by operator, and one case per distinct op), the op families (tflite_import_ops.c: one function per
 * family, and the dispatch of an operator to its family) and their building blocks (tflite_import_util.c: messages,
 * permutations, tensors and their forms, constants, emitting parity nodes). The tensor state and the permutations
 * they keep are described at the top of tflite_import.c.
 * The helpers are par_tfi_* outside these files; function-like macros keep their short names inside. Internal to
 * formats/.
 */
#ifndef PAR_FORMATS_TFLITE_IMPORT_INT_H
#define PAR_FORMATS_TFLITE_IMPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "formats/tflite.h"

#define MAXR PAR_TFL_MAX_RANK
#define MAX_FORMS 4

typedef struct form {
    int32_t perm[MAXR];
    int32_t v;
} form;

typedef struct tens {
    int32_t v;             /* the parity value, -1 until made */
    int32_t pv[MAXR];
    int32_t n_forms;
    form forms[MAX_FORMS]; /* materialized forms (cache) */
    float *fold;           /* f32 data of a folded DEQUANTIZE of a constant */
    int bad;               /* produced by an op that did not map */
    int32_t n_uses;        /* operators reading it, plus 1 for a graph output */
    int32_t pad_of;        /* a zero spatial PAD left for its one consumer, a VALID convolution, to take: the PAD's
                            * input tensor (-1: none) and its pads [top, left, bottom, right] */
    int64_t pad[4];
} tens;

typedef struct imp {
    const par_tfl_model *m;
    const par_tfl_subgraph *g;
    par_case *c;
    tens *t;
    par_import_info *info;
    par_msg *msg;
    const char *origin;
    int32_t op;            /* index of the operator being mapped, -1 outside */
    int failed;            /* a hard error (msg set) */
    int unmapped;          /* the current op does not map: why */
    char why[160];
    char name[256];
} imp;

const char *par_tfi_opname(const imp *im, const par_tfl_op *op);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int par_tfi_fail(imp *im, const char *fmt, ...);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int par_tfi_unmapped(imp *im, const char *fmt, ...);
int par_tfi_builder(imp *im);
void par_tfi_ident(int32_t r, int32_t *p);
void par_tfi_stored(int32_t r, int32_t *p);
void par_tfi_invert(int32_t r, const int32_t *p, int32_t *inv);
const par_tfl_tensor *par_tfi_T(const imp *im, int32_t ti);
int64_t par_tfi_numel(const par_tfl_tensor *t);
const par_tfl_buffer *par_tfi_tbuf(const imp *im, int32_t ti);
int par_tfi_is_const(const imp *im, int32_t ti);
const char *par_tfi_uname(imp *im, int32_t ti, const char *suffix);
par_dtype par_tfi_dtype_of(const par_tfl_tensor *t);
int par_tfi_quantized(const par_tfl_tensor *t);
par_out_spec par_tfi_spec(const imp *im, int32_t ti, const char *name);
float par_tfi_half_to_float(uint16_t h);
const uint8_t *par_tfi_const_bytes(imp *im, int32_t ti, size_t esz);
int32_t par_tfi_make_const(imp *im, int32_t ti, int32_t lift_rank, const int32_t *p, int32_t rank_out,
                           const int64_t *dims_out, const char *suffix);
int par_tfi_check_dims(imp *im, int32_t ti);
int32_t par_tfi_cur(imp *im, int32_t ti, int32_t *pv);
int32_t par_tfi_get(imp *im, int32_t ti, const int32_t *p);
int32_t par_tfi_get_stored(imp *im, int32_t ti);
int32_t par_tfi_get_logical(imp *im, int32_t ti);
int par_tfi_set_out(imp *im, int32_t ti, int32_t v, const int32_t *pv);
const char *par_tfi_act_op(int32_t act);
int32_t par_tfi_emit(imp *im, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attrs,
                     const par_attr *attrs, int32_t ti, int32_t act);
int par_tfi_const_ints(imp *im, int32_t ti, int64_t *out, int64_t max, int64_t *n);
void par_tfi_same_pad(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t *lo, int64_t *hi);
int32_t par_tfi_drop_axes(imp *im, int32_t v, int32_t r, const int32_t *pv, const int *drop, int32_t ti_out,
                          int32_t *pv_out);

#define opname(...) par_tfi_opname(__VA_ARGS__)
#define fail(...) par_tfi_fail(__VA_ARGS__)
#define unmapped(...) par_tfi_unmapped(__VA_ARGS__)
#define builder(...) par_tfi_builder(__VA_ARGS__)
#define ident(...) par_tfi_ident(__VA_ARGS__)
#define stored(...) par_tfi_stored(__VA_ARGS__)
#define invert(...) par_tfi_invert(__VA_ARGS__)
#define T(...) par_tfi_T(__VA_ARGS__)
#define numel(...) par_tfi_numel(__VA_ARGS__)
#define tbuf(...) par_tfi_tbuf(__VA_ARGS__)
#define is_const(...) par_tfi_is_const(__VA_ARGS__)
#define uname(...) par_tfi_uname(__VA_ARGS__)
#define dtype_of(...) par_tfi_dtype_of(__VA_ARGS__)
#define quantized(...) par_tfi_quantized(__VA_ARGS__)
#define spec(...) par_tfi_spec(__VA_ARGS__)
#define half_to_float(...) par_tfi_half_to_float(__VA_ARGS__)
#define const_bytes(...) par_tfi_const_bytes(__VA_ARGS__)
#define make_const(...) par_tfi_make_const(__VA_ARGS__)
#define check_dims(...) par_tfi_check_dims(__VA_ARGS__)
#define cur(...) par_tfi_cur(__VA_ARGS__)
#define get(...) par_tfi_get(__VA_ARGS__)
#define get_stored(...) par_tfi_get_stored(__VA_ARGS__)
#define get_logical(...) par_tfi_get_logical(__VA_ARGS__)
#define set_out(...) par_tfi_set_out(__VA_ARGS__)
#define act_op(...) par_tfi_act_op(__VA_ARGS__)
#define emit(...) par_tfi_emit(__VA_ARGS__)
#define const_ints(...) par_tfi_const_ints(__VA_ARGS__)
#define same_pad(...) par_tfi_same_pad(__VA_ARGS__)
#define drop_axes(...) par_tfi_drop_axes(__VA_ARGS__)

/* One operator into the case through its family (tflite_import_ops.c): 1; 0 when it does not map (im->unmapped,
 * im->why) or on a hard error (im->failed). */
int par_tfi_map_op(imp *im, const par_tfl_op *op);
#define map_op(...) par_tfi_map_op(__VA_ARGS__)

#endif
