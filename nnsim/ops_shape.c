/*
 * ops_shape.c - data movement with NNAPI's semantics: RESHAPE (one -1 inferred), TRANSPOSE (perm omitted: reversed),
 * CONCATENATION (level 27: every input with the output's scale and zero point; from 29 they may differ and are
 * requantized as TFLite's ConcatenationWithScaling, in float), PAD (zeros, the zero point for quantized tensors),
 * PAD_V2 (a pad value in the input's type), SLICE (size -1: to the end), STRIDED_SLICE (masks as Android's
 * stridedSlicePrepare) and GATHER (level 29: an index outside the axis fails the execution, as Android's gather). Quantized outputs of RESHAPE, TRANSPOSE, PAD, PAD_V2, SLICE and STRIDED_SLICE keep the
 * input's quantization.
 * Must not know where the operation runs.
 */
#include <math.h>
#include <string.h>

#include "nnsim.h"

#define OK ANEURALNETWORKS_NO_ERROR

static int check_data_type(nn_ctx *c, int32_t t)
{
    NN_CHECK(c,
             t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 ||
                 t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED ||
                 (t == ANEURALNETWORKS_TENSOR_INT32 && c->op->type != ANEURALNETWORKS_CONCATENATION),
             "input type %s is not supported", nn_type_name(t));
    return OK;
}

/* Same type, and for quantized tensors the same scale and zero point. */
static int check_passthrough(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *y = c->out[0];
    int rc = check_data_type(c, x->type);
    if (rc) return rc;
    NN_CHECK(c, y->type == x->type, "output type %s differs from the input's %s", nn_type_name(y->type),
             nn_type_name(x->type));
    if (nn_type_is_quant8(x->type))
        NN_CHECK(c, x->scale == y->scale && x->zp == y->zp, "the output must keep the input's scale and zeroPoint");
    return OK;
}

/* ---- RESHAPE ---- */

int nn_check_reshape(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 2 && c->n_out == 1, "%u inputs, %u outputs (takes 2 and 1)", c->n_in, c->n_out);
    NN_CHECK(c, nn_is_type(c, 1, ANEURALNETWORKS_TENSOR_INT32) && c->in[1]->rank == 1,
             "input 1 (shape) must be a 1-D "
             "TENSOR_INT32");
    return check_passthrough(c);
}

int nn_eval_reshape(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *s = c->in[1];
    NN_CHECK(c, s->data && s->dims[0] >= 1 && s->dims[0] <= NN_MAX_RANK, "shape has %u values", s->dims[0]);
    uint32_t rank = s->dims[0], dims[NN_MAX_RANK];
    size_t known = 1, n = nn_numel(x);
    int infer = -1;
    for (uint32_t i = 0; i < rank; i++) {
        int32_t d = ((const int32_t *)s->data)[i];
        NN_CHECK(c, d > 0 || (d == -1 && infer < 0), "shape value %u is %d", i, (int)d);
        if (d == -1)
            infer = (int)i;
        else
            known *= (size_t)d, dims[i] = (uint32_t)d;
    }
    if (infer >= 0) {
        NN_CHECK(c, known && n % known == 0, "%zu values do not reshape with -1", n);
        dims[infer] = (uint32_t)(n / known);
        known *= dims[infer];
    }
    NN_CHECK(c, known == n, "%zu values cannot take a shape of %zu", n, known);
    int rc = c->alloc(c, 0, rank, dims);
    if (rc) return rc;
    memcpy(c->out[0]->data, x->data, n * nn_type_size(x->type));
    return OK;
}

/* ---- TRANSPOSE ---- */

int nn_check_transpose(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 2 && c->n_out == 1, "%u inputs, %u outputs (takes 2 and 1)", c->n_in, c->n_out);
    NN_CHECK(c, nn_is_type(c, 1, ANEURALNETWORKS_TENSOR_INT32), "input 1 (perm) must be TENSOR_INT32");
    NN_CHECK(c, c->in[0]->rank <= 4, "rank %u above 4", c->in[0]->rank);
    return check_passthrough(c);
}

/* Copies x into y where y's coordinate i is x's coordinate perm[i] (TRANSPOSE) or x's at begin[i] + coordinate i
 * times step[i] (SLICE, STRIDED_SLICE, PAD with negative begins meaning padding). Outside x: fill (one element's
 * bytes; NULL: zero, the zero point of a quantized tensor). */
static void gather_copy(const nn_tensor *x, nn_tensor *y, const uint32_t *perm, const int64_t *begin,
                        const int64_t *step, const void *fill)
{
    size_t es = nn_type_size(x->type), n = nn_numel(y);
    size_t xs[NN_MAX_RANK], s = 1;
    for (int i = (int)x->rank - 1; i >= 0; i--) xs[i] = s, s *= x->dims[i];
    uint32_t coord[NN_MAX_RANK] = {0};
    int32_t pad = nn_type_is_quant8(x->type) ? x->zp : 0;
    for (size_t k = 0; k < n; k++) {
        size_t xi = 0;
        int inside = 1;
        for (uint32_t i = 0; i < y->rank; i++) {
            uint32_t src = perm ? perm[i] : i;
            int64_t v = (int64_t)coord[i] * (step ? step[i] : 1) + (begin ? begin[i] : 0);
            if (v < 0 || v >= x->dims[src])
                inside = 0;
            else
                xi += (size_t)v * xs[src];
        }
        char *dst = (char *)y->data + k * es;
        if (inside)
            memcpy(dst, (const char *)x->data + xi * es, es);
        else if (fill)
            memcpy(dst, fill, es);
        else if (nn_type_is_quant8(x->type))
            nn_q_set(y, k, pad);
        else
            memset(dst, 0, es);
        for (int i = (int)y->rank - 1; i >= 0; i--) {
            if (++coord[i] < y->dims[i]) break;
            coord[i] = 0;
        }
    }
}

int nn_eval_transpose(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *pt = c->in[1];
    uint32_t r = x->rank, perm[NN_MAX_RANK], dims[NN_MAX_RANK], seen = 0;
    if (!pt->data) {
        for (uint32_t i = 0; i < r; i++) perm[i] = r - 1 - i;
    } else {
        NN_CHECK(c, pt->rank == 1 && pt->dims[0] == r, "perm has %u values for rank %u", pt->dims[0], r);
        for (uint32_t i = 0; i < r; i++) {
            int32_t p = ((const int32_t *)pt->data)[i];
            NN_CHECK(c, p >= 0 && (uint32_t)p < r && !(seen & (1u << p)), "perm is not a permutation of [0, %u)", r);
            seen |= 1u << p;
            perm[i] = (uint32_t)p;
        }
    }
    for (uint32_t i = 0; i < r; i++) dims[i] = x->dims[perm[i]];
    int rc = c->alloc(c, 0, r, dims);
    if (rc) return rc;
    gather_copy(x, c->out[0], perm, NULL, NULL, NULL);
    return OK;
}

/* ---- CONCATENATION ---- */

int nn_check_concat(nn_ctx *c)
{
    NN_CHECK(c, c->n_in >= 2 && c->n_out == 1, "%u inputs, %u outputs (takes at least 2 and 1)", c->n_in, c->n_out);
    uint32_t n = c->n_in - 1;
    NN_CHECK(c, nn_is_type(c, n, ANEURALNETWORKS_INT32), "the last input (axis) must be INT32");
    const nn_tensor *y = c->out[0];
    int rc = check_data_type(c, y->type);
    if (rc) return rc;
    for (uint32_t i = 0; i < n; i++) {
        const nn_tensor *x = c->in[i];
        NN_CHECK(c, x->type == y->type, "input %u is %s, the output %s", i, nn_type_name(x->type),
                 nn_type_name(y->type));
        NN_CHECK(c, !x->rank || !c->in[0]->rank || x->rank == c->in[0]->rank, "input %u has rank %u, input 0 %u", i,
                 x->rank, c->in[0]->rank);
        if (nn_type_is_quant8(y->type) && (x->scale != y->scale || x->zp != y->zp) && c->level < 29)
            c->level = 29; /* level 27 needs one quantization for all */
    }
    return OK;
}

int nn_eval_concat(nn_ctx *c)
{
    uint32_t n = c->n_in - 1, r = c->in[0]->rank, dims[NN_MAX_RANK];
    int32_t axis = 0;
    nn_param_i32(c, n, &axis);
    NN_CHECK(c, r >= 1 && axis >= -(int32_t)r && axis < (int32_t)r, "axis %d outside [-%u, %u)", (int)axis, r, r);
    if (axis < 0) axis += (int32_t)r;
    memcpy(dims, c->in[0]->dims, sizeof dims);
    dims[axis] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const nn_tensor *x = c->in[i];
        NN_CHECK(c, x->rank == r, "input %u has rank %u, input 0 %u", i, x->rank, r);
        for (uint32_t d = 0; d < r; d++)
            NN_CHECK(c, (int32_t)d == axis || x->dims[d] == c->in[0]->dims[d],
                     "input %u dimension %u is %u, input 0's "
                     "%u",
                     i, d, x->dims[d], c->in[0]->dims[d]);
        dims[axis] += x->dims[axis];
    }
    int rc = c->alloc(c, 0, r, dims);
    if (rc) return rc;
    nn_tensor *y = c->out[0];
    size_t outer = 1, inner = 1, es = nn_type_size(y->type), off = 0;
    for (int32_t d = 0; d < axis; d++) outer *= dims[d];
    for (uint32_t d = (uint32_t)axis + 1; d < r; d++) inner *= dims[d];
    for (uint32_t i = 0; i < n; i++) {
        const nn_tensor *x = c->in[i];
        size_t chunk = x->dims[axis] * inner;
        int requant = nn_type_is_quant8(y->type) && (x->scale != y->scale || x->zp != y->zp);
        float scale = x->scale / y->scale, bias = -(float)x->zp * scale;
        for (size_t o = 0; o < outer; o++) {
            size_t yo = o * dims[axis] * inner + off, xo = o * chunk;
            if (!requant) {
                memcpy((char *)y->data + yo * es, (const char *)x->data + xo * es, chunk * es);
                continue;
            }
            for (size_t k = 0; k < chunk; k++)
                nn_q_set(y, yo + k, (int32_t)roundf((float)nn_q_get(x, xo + k) * scale + bias) + y->zp);
        }
        off += chunk;
    }
    return OK;
}

/* ---- PAD ---- */

int nn_check_pad(nn_ctx *c)
{
    int v2 = c->op->type == ANEURALNETWORKS_PAD_V2;
    NN_CHECK(c, c->n_in == 2u + (uint32_t)v2 && c->n_out == 1, "%u inputs, %u outputs (takes %d and 1)", c->n_in,
             c->n_out, 2 + v2);
    if (v2) {
        int32_t t = c->in[0]->type;
        int32_t want = t == ANEURALNETWORKS_TENSOR_FLOAT32   ? ANEURALNETWORKS_FLOAT32
                       : t == ANEURALNETWORKS_TENSOR_FLOAT16 ? ANEURALNETWORKS_FLOAT16
                                                             : ANEURALNETWORKS_INT32;
        NN_CHECK(c, t != ANEURALNETWORKS_TENSOR_INT32, "input type TENSOR_INT32 is not supported");
        NN_CHECK(c, nn_is_type(c, 2, want), "input 2 (pad value) must be %s for a %s input", nn_type_name(want),
                 nn_type_name(t));
    }
    NN_CHECK(c, nn_is_type(c, 1, ANEURALNETWORKS_TENSOR_INT32) && c->in[1]->rank == 2,
             "input 1 (paddings) must be a "
             "[rank, 2] TENSOR_INT32");
    NN_CHECK(c, c->in[0]->rank <= 4, "rank %u above 4", c->in[0]->rank);
    int rc = check_passthrough(c);
    if (!rc && nn_type_is_quant8(c->in[0]->type) && c->level < 29) c->level = 29;
    return rc;
}

int nn_eval_pad(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *pd = c->in[1];
    uint32_t r = x->rank, dims[NN_MAX_RANK];
    int64_t begin[NN_MAX_RANK];
    NN_CHECK(c, pd->data && pd->dims[0] == r && pd->dims[1] == 2, "paddings must be [%u, 2]", r);
    const int32_t *p = pd->data;
    for (uint32_t i = 0; i < r; i++) {
        NN_CHECK(c, p[2 * i] >= 0 && p[2 * i + 1] >= 0, "negative padding in dimension %u", i);
        dims[i] = x->dims[i] + (uint32_t)p[2 * i] + (uint32_t)p[2 * i + 1];
        begin[i] = -(int64_t)p[2 * i];
    }
    int rc = c->alloc(c, 0, r, dims);
    if (rc) return rc;
    /* PAD_V2: the pad value in the input's type (FLOAT32, FLOAT16, or the stored INT32 of a quantized input). */
    unsigned char fill[4];
    if (c->op->type == ANEURALNETWORKS_PAD_V2) {
        if (nn_type_is_quant8(x->type)) {
            int32_t q = 0;
            nn_param_i32(c, 2, &q);
            NN_CHECK(c, q >= nn_quant_zp_min(x->type) && q <= nn_quant_zp_max(x->type),
                     "pad value %d outside the %s range", (int)q, nn_type_name(x->type));
            fill[0] = (unsigned char)(x->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? (uint8_t)q : (uint8_t)(int8_t)q);
        } else {
            float v = 0;
            nn_param_f32(c, 2, &v);
            if (x->type == ANEURALNETWORKS_TENSOR_FLOAT16) {
                uint16_t h = nn_f32_to_f16(v);
                memcpy(fill, &h, 2);
            } else {
                memcpy(fill, &v, 4);
            }
        }
    }
    gather_copy(x, c->out[0], NULL, begin, NULL, c->op->type == ANEURALNETWORKS_PAD_V2 ? fill : NULL);
    return OK;
}

/* ---- SLICE ---- */

int nn_check_slice(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 3 && c->n_out == 1, "%u inputs, %u outputs (takes 3 and 1)", c->n_in, c->n_out);
    NN_CHECK(c, nn_is_type(c, 1, ANEURALNETWORKS_TENSOR_INT32) && nn_is_type(c, 2, ANEURALNETWORKS_TENSOR_INT32),
             "inputs 1, 2 (begin, size) must be TENSOR_INT32");
    return check_passthrough(c);
}

int nn_eval_slice(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *b = c->in[1], *s = c->in[2];
    uint32_t r = x->rank, dims[NN_MAX_RANK];
    int64_t begin[NN_MAX_RANK];
    NN_CHECK(c, b->data && s->data && b->dims[0] == r && s->dims[0] == r, "begin and size need %u values", r);
    for (uint32_t i = 0; i < r; i++) {
        int32_t bi = ((const int32_t *)b->data)[i], si = ((const int32_t *)s->data)[i];
        NN_CHECK(c, bi >= 0 && (uint32_t)bi < x->dims[i], "begin[%u] = %d outside [0, %u)", i, (int)bi, x->dims[i]);
        if (si == -1) si = (int32_t)x->dims[i] - bi;
        NN_CHECK(c, si > 0 && (uint32_t)bi + (uint32_t)si <= x->dims[i], "size[%u] = %d exceeds the input", i, (int)si);
        dims[i] = (uint32_t)si;
        begin[i] = bi;
    }
    int rc = c->alloc(c, 0, r, dims);
    if (rc) return rc;
    gather_copy(x, c->out[0], NULL, begin, NULL, NULL);
    return OK;
}

/* ---- STRIDED_SLICE (level 28) ----
 * Inputs: the tensor (rank <= 4), begin, end, strides (TENSOR_INT32 [rank], strides non-zero), begin_mask,
 * end_mask, shrink_axis_mask (INT32; bit i for dimension i). As Android's stridedSlicePrepare: a masked begin is
 * 0 (the last index for a negative stride), a masked end the dimension (-1); other values are clamped by
 * ClampedIndex (positive stride: >= dim gives dim, else clamped to [-dim, dim] and taken modulo dim; negative
 * stride: < -dim gives -1, else clamped to [-dim, dim - 1] and taken modulo dim); the size is
 * ceil((end - begin) / stride), at least 0; a shrunk dimension needs a positive stride and size 1 and is dropped
 * from the output. The output keeps the input's type and quantization. */
int nn_check_strided_slice(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 7 && c->n_out == 1, "%u inputs, %u outputs (takes 7 and 1)", c->n_in, c->n_out);
    for (uint32_t i = 1; i < 4; i++)
        NN_CHECK(c, nn_is_type(c, i, ANEURALNETWORKS_TENSOR_INT32) && c->in[i]->rank == 1,
                 "input %u (begin, end, strides) must be a rank-1 TENSOR_INT32", i);
    for (uint32_t i = 4; i < 7; i++)
        NN_CHECK(c, nn_is_type(c, i, ANEURALNETWORKS_INT32), "input %u (begin, end, shrink mask) must be INT32", i);
    NN_CHECK(c, c->in[0]->rank <= 4, "rank %u above 4", c->in[0]->rank);
    NN_CHECK(c, c->in[0]->type != ANEURALNETWORKS_TENSOR_INT32, "input type TENSOR_INT32 is not supported");
    return check_passthrough(c);
}

static int32_t clamped_index(int32_t index, int32_t dim, int pos)
{
    if (pos) {
        if (index >= dim) return dim;
        int32_t v = index < -dim ? -dim : index;
        return ((v % dim) + dim) % dim;
    }
    if (index < -dim) return -1;
    int32_t v = index > dim - 1 ? dim - 1 : index;
    return ((v % dim) + dim) % dim;
}

int nn_eval_strided_slice(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *bt = c->in[1], *et = c->in[2], *st = c->in[3];
    uint32_t r = x->rank, dims[NN_MAX_RANK], full[NN_MAX_RANK], out_r = 0;
    int64_t begin[NN_MAX_RANK], step[NN_MAX_RANK];
    int32_t bmask = 0, emask = 0, smask = 0;
    nn_param_i32(c, 4, &bmask), nn_param_i32(c, 5, &emask), nn_param_i32(c, 6, &smask);
    NN_CHECK(c, bt->data && et->data && st->data && bt->dims[0] == r && et->dims[0] == r && st->dims[0] == r,
             "begin, end and strides need %u values", r);
    const int32_t *bv = bt->data, *ev = et->data, *sv = st->data;
    for (uint32_t i = 0; i < r; i++) {
        int32_t dim = (int32_t)x->dims[i], s = sv[i];
        NN_CHECK(c, s != 0, "stride %u is 0", i);
        int pos = s > 0;
        int32_t b = bmask & (1 << i) ? (pos ? 0 : dim - 1) : clamped_index(bv[i], dim, pos);
        int32_t e = emask & (1 << i) ? (pos ? dim : -1) : clamped_index(ev[i], dim, pos);
        int64_t n = ((int64_t)e - b) / s + (((int64_t)e - b) % s != 0 && ((e - b) > 0) == (s > 0));
        if (n < 0) n = 0;
        if (smask & (1 << i))
            NN_CHECK(c, pos && n == 1, "dimension %u is shrunk but its slice has size %lld with stride %d", i,
                     (long long)n, (int)s);
        else
            dims[out_r++] = (uint32_t)n;
        NN_CHECK(c, n > 0, "dimension %u of the slice is empty", i);
        full[i] = (uint32_t)n, begin[i] = b, step[i] = s;
    }
    if (!out_r) dims[out_r++] = 1; /* every dimension shrunk: one value */
    int rc = c->alloc(c, 0, out_r, dims);
    if (rc) return rc;
    nn_tensor view = *c->out[0]; /* the output with its shrunk dimensions kept as 1 */
    view.rank = r;
    memcpy(view.dims, full, sizeof full);
    gather_copy(x, &view, NULL, begin, step, NULL);
    return OK;
}

/* ---- GATHER (level 29) ----
 * Inputs: the tensor (rank 1..4), the axis (INT32, negative counts from the end), the indices (TENSOR_INT32 of any
 * rank); output = input.dims[:axis] + indices.dims + input.dims[axis + 1:] (rank <= 4 here), the input's type and
 * quantization. Android's gather checks every index against the axis and fails the execution otherwise. */
static int gather_axis(nn_ctx *c, int32_t *axis)
{
    const nn_tensor *x = c->in[0];
    NN_CHECK(c, nn_param_i32(c, 1, axis), "input 1 (axis) must be a constant INT32");
    if (*axis < 0) *axis += (int32_t)x->rank;
    NN_CHECK(c, *axis >= 0 && (uint32_t)*axis < x->rank, "axis outside the input's rank %u", x->rank);
    return OK;
}

int nn_check_gather(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 3 && c->n_out == 1, "%u inputs, %u outputs (takes 3 and 1)", c->n_in, c->n_out);
    NN_CHECK(c, nn_is_type(c, 2, ANEURALNETWORKS_TENSOR_INT32), "input 2 (indices) must be TENSOR_INT32");
    NN_CHECK(c, c->in[0]->rank >= 1 && c->in[0]->rank <= 4, "input rank %u (takes 1 to 4)", c->in[0]->rank);
    int32_t axis;
    int rc = gather_axis(c, &axis);
    return rc ? rc : check_passthrough(c);
}

int nn_eval_gather(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *ix = c->in[2];
    int32_t axis;
    int rc = gather_axis(c, &axis);
    if (rc) return rc;
    uint32_t r = 0, dims[NN_MAX_RANK * 2];
    for (int32_t i = 0; i < axis; i++) dims[r++] = x->dims[i];
    for (uint32_t i = 0; i < ix->rank; i++) dims[r++] = ix->dims[i];
    for (uint32_t i = (uint32_t)axis + 1; i < x->rank; i++) dims[r++] = x->dims[i];
    NN_CHECK(c, r <= 4, "output rank %u above 4", r);
    size_t outer = 1, inner = nn_type_size(x->type), n_ix = nn_numel(ix);
    for (int32_t i = 0; i < axis; i++) outer *= x->dims[i];
    for (uint32_t i = (uint32_t)axis + 1; i < x->rank; i++) inner *= x->dims[i];
    const int32_t *id = ix->data;
    const uint32_t len = x->dims[axis];
    for (size_t k = 0; k < n_ix; k++)
        NN_CHECK(c, id[k] >= 0 && (uint32_t)id[k] < len, "index %d outside [0, %u)", (int)id[k], len);
    if ((rc = c->alloc(c, 0, r, dims))) return rc;
    const char *src = x->data;
    char *dst = c->out[0]->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t k = 0; k < n_ix; k++, dst += inner) memcpy(dst, src + (o * len + (size_t)id[k]) * inner, inner);
    return OK;
}
