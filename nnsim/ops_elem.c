/*
 * ops_elem.c - element-wise NNAPI operations: ADD, SUB, MUL, DIV with NNAPI's broadcasting (numpy rules, trailing
 * dimensions aligned); RELU, RELU1, RELU6, LOGISTIC, TANH, HARD_SWISH; PRELU; SOFTMAX and LOG_SOFTMAX (beta, axis
 * from level 29); QUANTIZE and DEQUANTIZE.
 *   Quantized ADD / SUB: Android's addQuant8 (TFLite's integer Add): inputs shifted left by 20, scaled by
 *   s_i / (2 max(s_a, s_b)) and the sum by 2 max(s_a, s_b) / (2^20 s_out), each a gemmlowp multiply (SRDHM, then a
 *   rounding divide); SUB negates the second multiplier. Quantized MUL: (qa - za)(qb - zb) requantized by
 *   s_a s_b / s_out. PRELU: two multipliers, s_x / s_out for x >= 0 and s_x s_alpha / s_out below.
 *   Quantized LOGISTIC (output scale 1/256, zero point 0 or -128), TANH (1/128, 128 or 0) and SOFTMAX (1/256, 0
 *   or -128): Android's integer paths, gemmlowp's fixed-point functions (ops_fixed.c). Quantized HARD_SWISH:
 *   TFLite's int16 fixed point (ops_fixed.c), as Android's hardSwishQuant.
 * Must not know where the operation runs (relaxed rounding is the engine's).
 */
#include <math.h>
#include <string.h>

#include "nnsim.h"
#include "core/requant.h"

#define OK ANEURALNETWORKS_NO_ERROR

/* TFLite's QuantizeMultiplier: real = m * 2^(shift - 31), m in [2^30, 2^31). */
static void quantize_multiplier(double real, int32_t *m, int *shift)
{
    if (real == 0) {
        *m = 0, *shift = 0;
        return;
    }
    double q = frexp(real, shift);
    int64_t f = (int64_t)llround(q * 2147483648.0);
    if (f == 2147483648LL) f /= 2, ++*shift;
    *m = (int32_t)f;
}

/* MultiplyByQuantizedMultiplier: left shift, SRDHM, rounding right shift. */
static int32_t mbqm(int32_t x, int32_t m, int shift)
{
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    int64_t xl = (int64_t)x * ((int64_t)1 << left);
    if (xl > INT32_MAX) xl = INT32_MAX;
    if (xl < INT32_MIN) xl = INT32_MIN;
    return par_requant_rdivpot(par_requant_srdhm((int32_t)xl, m), right);
}

static int same_quant(const nn_tensor *a, const nn_tensor *b)
{
    return a->scale == b->scale && a->zp == b->zp;
}

/* ---- binary ---- */

static int broadcast_shape(nn_ctx *c, const nn_tensor *a, const nn_tensor *b, uint32_t *rank, uint32_t *dims)
{
    uint32_t r = a->rank > b->rank ? a->rank : b->rank;
    for (uint32_t i = 0; i < r; i++) {
        uint32_t da = i < r - a->rank ? 1 : a->dims[i - (r - a->rank)];
        uint32_t db = i < r - b->rank ? 1 : b->dims[i - (r - b->rank)];
        if (da && db && da != db && da != 1 && db != 1)
            return nn_fail(c, ANEURALNETWORKS_BAD_DATA, "dimensions %u and %u do not broadcast", da, db);
        dims[i] = da == 1 ? db : da;
    }
    *rank = r;
    return OK;
}

int nn_check_binary(nn_ctx *c)
{
    int32_t op = c->op->type;
    NN_CHECK(c, c->n_in == 3 && c->n_out == 1, "%u inputs, %u outputs (takes 3 and 1)", c->n_in, c->n_out);
    const nn_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    int32_t t = a->type;
    int quant = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
    NN_CHECK(c,
             t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 ||
                 (quant && op != ANEURALNETWORKS_DIV),
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, b->type == t && y->type == t, "inputs and output must all be %s", nn_type_name(t));
    if (quant && op == ANEURALNETWORKS_SUB && c->level < 29) c->level = 29;
    uint32_t r, dims[NN_MAX_RANK * 2];
    NN_CHECK(c, a->rank <= 4 && b->rank <= 4, "rank above 4");
    int rc = broadcast_shape(c, a, b, &r, dims);
    return rc ? rc : nn_check_fuse(c, 2);
}

/* The strides of a and b over the output's coordinates (0 where broadcast), for bcast_next. */
static void bcast_strides(const nn_tensor *a, const nn_tensor *b, uint32_t r, size_t *sa, size_t *sb)
{
    size_t stride_a = 1, stride_b = 1;
    for (int i = (int)r - 1; i >= 0; i--) {
        int ia = i - (int)(r - a->rank), ib = i - (int)(r - b->rank);
        uint32_t da = ia < 0 ? 1 : a->dims[ia], db = ib < 0 ? 1 : b->dims[ib];
        sa[i] = da == 1 ? 0 : stride_a;
        sb[i] = db == 1 ? 0 : stride_b;
        stride_a *= da;
        stride_b *= db;
    }
}

/* The next output coordinate, and the elements of a and b it reads. */
static void bcast_next(uint32_t r, const uint32_t *dims, const size_t *sa, const size_t *sb, uint32_t *coord,
                       size_t *ia, size_t *ib)
{
    for (int i = (int)r - 1; i >= 0; i--) {
        *ia += sa[i], *ib += sb[i];
        if (++coord[i] < dims[i]) break;
        *ia -= sa[i] * dims[i], *ib -= sb[i] * dims[i];
        coord[i] = 0;
    }
}

int nn_eval_binary(nn_ctx *c)
{
    const nn_tensor *a = c->in[0], *b = c->in[1];
    int32_t op = c->op->type, fuse = 0;
    uint32_t r, dims[NN_MAX_RANK];
    nn_param_i32(c, 2, &fuse);
    int rc = broadcast_shape(c, a, b, &r, dims);
    if (rc || (rc = c->alloc(c, 0, r, dims))) return rc;
    nn_tensor *y = c->out[0];
    size_t sa[NN_MAX_RANK], sb[NN_MAX_RANK];
    bcast_strides(a, b, r, sa, sb);
    int quant = nn_type_is_quant8(a->type);
    int32_t m1 = 0, m2 = 0, mo = 0, qmin = 0, qmax = 0;
    int s1 = 0, s2 = 0, so = 0;
    if (quant) {
        nn_fuse_qrange(fuse, y, &qmin, &qmax);
        if (op == ANEURALNETWORKS_MUL) {
            quantize_multiplier((double)(a->scale * b->scale) / y->scale, &mo, &so); /* float product, as Android */
        } else {
            double twice_max = 2.0 * fmax(a->scale, b->scale);
            quantize_multiplier(a->scale / twice_max, &m1, &s1);
            quantize_multiplier(b->scale / twice_max, &m2, &s2);
            quantize_multiplier(twice_max / ((1 << 20) * (double)y->scale), &mo, &so);
            if (op == ANEURALNETWORKS_SUB) m2 = -m2;
        }
    }
    float lo, hi;
    nn_fuse_range(fuse, &lo, &hi);
    size_t n = nn_numel(y);
    uint32_t coord[NN_MAX_RANK] = {0};
    size_t ia = 0, ib = 0;
    for (size_t k = 0; k < n; k++) {
        if (quant) {
            int32_t xa = nn_q_get(a, ia) - a->zp, xb = nn_q_get(b, ib) - b->zp, v;
            if (op == ANEURALNETWORKS_MUL) {
                v = mbqm(xa * xb, mo, so);
            } else {
                int32_t ta = mbqm(xa * (1 << 20), m1, s1), tb = mbqm(xb * (1 << 20), m2, s2);
                v = mbqm(ta + tb, mo, so);
            }
            v += y->zp;
            nn_q_set(y, k, v < qmin ? qmin : v > qmax ? qmax : v);
        } else {
            float va = ((const float *)a->data)[ia], vb = ((const float *)b->data)[ib], v;
            v = op == ANEURALNETWORKS_ADD   ? va + vb
                : op == ANEURALNETWORKS_SUB ? va - vb
                : op == ANEURALNETWORKS_MUL ? va * vb
                                            : va / vb;
            ((float *)y->data)[k] = v < lo ? lo : v > hi ? hi : v;
        }
        bcast_next(r, dims, sa, sb, coord, &ia, &ib);
    }
    return OK;
}

/* ---- MAXIMUM, MINIMUM (level 29) ----
 * Two inputs, no fused activation, broadcasting as ADD. Float only here (NNAPI also defines quantized forms, which
 * the simulator does not implement). Android's maximum.cpp takes std::max(a, b), which is (a < b) ? b : a. */
int nn_check_minmax(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 2 && c->n_out == 1, "%u inputs, %u outputs (takes 2 and 1)", c->n_in, c->n_out);
    const nn_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    int32_t t = a->type;
    NN_CHECK(c, t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16,
             "input type %s is not simulated (float only)", nn_type_name(t));
    NN_CHECK(c, b->type == t && y->type == t, "inputs and output must all be %s", nn_type_name(t));
    NN_CHECK(c, a->rank <= 4 && b->rank <= 4, "rank above 4");
    uint32_t r, dims[NN_MAX_RANK * 2];
    return broadcast_shape(c, a, b, &r, dims);
}

int nn_eval_minmax(nn_ctx *c)
{
    const nn_tensor *a = c->in[0], *b = c->in[1];
    const int mx = c->op->type == ANEURALNETWORKS_MAXIMUM;
    uint32_t r, dims[NN_MAX_RANK];
    int rc = broadcast_shape(c, a, b, &r, dims);
    if (rc || (rc = c->alloc(c, 0, r, dims))) return rc;
    nn_tensor *y = c->out[0];
    size_t sa[NN_MAX_RANK], sb[NN_MAX_RANK];
    bcast_strides(a, b, r, sa, sb);
    size_t n = nn_numel(y), ia = 0, ib = 0;
    uint32_t coord[NN_MAX_RANK] = {0};
    for (size_t k = 0; k < n; k++) {
        float va = ((const float *)a->data)[ia], vb = ((const float *)b->data)[ib];
        ((float *)y->data)[k] = mx ? (va < vb ? vb : va) : (vb < va ? vb : va);
        bcast_next(r, dims, sa, sb, coord, &ia, &ib);
    }
    return OK;
}

/* ---- unary ---- */

/* The fixed output quantization NNAPI prescribes for LOGISTIC and TANH (and SOFTMAX). */
static int fixed_out_quant(nn_ctx *c, const nn_tensor *x, const nn_tensor *y, double scale, int32_t zp_u8)
{
    int32_t zp = x->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM ? zp_u8 : zp_u8 - 128;
    NN_CHECK(c, y->scale == (float)scale && y->zp == zp,
             "a quantized output needs scale %g and zeroPoint %d, not %g "
             "and %d",
             scale, (int)zp, (double)y->scale, (int)y->zp);
    return OK;
}

int nn_check_unary(nn_ctx *c)
{
    int32_t op = c->op->type;
    NN_CHECK(c, c->n_in == 1 && c->n_out == 1, "%u inputs, %u outputs (takes 1 and 1)", c->n_in, c->n_out);
    const nn_tensor *x = c->in[0], *y = c->out[0];
    int32_t t = x->type;
    int quant = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
    NN_CHECK(c, t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 || quant,
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, y->type == t, "output type %s differs from the input's %s", nn_type_name(y->type), nn_type_name(t));
    NN_CHECK(c, x->rank <= 4, "rank %u above 4", x->rank);
    NN_CHECK(c, !quant || op != ANEURALNETWORKS_RSQRT, "quantized RSQRT is not simulated");
    if (!quant) return OK;
    if (op == ANEURALNETWORKS_LOGISTIC) return fixed_out_quant(c, x, y, 1.0 / 256, 0);
    if (op == ANEURALNETWORKS_TANH) {
        if (c->level < 29) c->level = 29;
        return fixed_out_quant(c, x, y, 1.0 / 128, 128);
    }
    if (op != ANEURALNETWORKS_HARD_SWISH)
        NN_CHECK(c, same_quant(x, y), "RELU-family output quantization must equal the input's");
    return OK;
}

static double act(int32_t op, double x)
{
    switch (op) {
    case ANEURALNETWORKS_RELU: return x > 0 ? x : 0;
    case ANEURALNETWORKS_RELU1: return x < -1 ? -1 : x > 1 ? 1 : x;
    case ANEURALNETWORKS_RELU6: return x < 0 ? 0 : x > 6 ? 6 : x;
    case ANEURALNETWORKS_LOGISTIC: return 1 / (1 + exp(-x));
    case ANEURALNETWORKS_TANH: return tanh(x);
    default: { /* HARD_SWISH */ double r = x + 3 < 0 ? 0 : x + 3 > 6 ? 6 : x + 3; return x * r / 6;
    }
    }
}

/* Android's quantized LOGISTIC and TANH (logisticQuant8 / tanhQuant8 and their int8 twins): the input rescaled to
 * Q4.27 by a multiplier above one (QuantizeMultiplierGreaterThanOne of in_scale * 2^27), inputs beyond the radius
 * CalculateInputRadius gives saturate, the rest go through gemmlowp's fixed-point function; the Q0.31 result is
 * divided by 2^23 (logistic, output scale 1/256) or 2^24 (tanh, 1/128) with rounding. 0 when the input scale is too
 * small for that multiplier (below 2^-27): the caller then computes in double. */
static int fixed_point_act(nn_ctx *c, int32_t op)
{
    const nn_tensor *x = c->in[0];
    nn_tensor *y = c->out[0];
    double real = (double)x->scale * (double)(1 << 27);
    if (!(real > 1)) return 0;
    int shift;
    double q = frexp(real, &shift);
    int64_t fixed = (int64_t)round(q * 2147483648.0);
    if (fixed == 2147483648LL) fixed /= 2, shift++;
    int32_t mult = (int32_t)fixed;
    int32_t radius = (int32_t)floor(15.0 * (double)(1LL << 27) / (double)(1LL << shift));
    int u8 = y->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, logistic = op == ANEURALNETWORKS_LOGISTIC;
    size_t n = nn_numel(x);
    for (size_t k = 0; k < n; k++) {
        int32_t v = nn_q_get(x, k) - x->zp, o;
        if (v <= -radius) {
            o = u8 ? 0 : -128;
        } else if (v >= radius) {
            o = u8 ? 255 : 127;
        } else {
            int32_t q4 = par_requant_srdhm((int32_t)((int64_t)v * ((int64_t)1 << shift)), mult);
            o = logistic ? par_requant_rdivpot(nn_fixed_logistic_q4(q4), 23) + (u8 ? 0 : -128)
                         : par_requant_rdivpot(nn_fixed_tanh_q4(q4), 24) + (u8 ? 128 : 0);
            if (u8 && o == 256) o = 255;
        }
        nn_q_set(y, k, o);
    }
    return 1;
}

int nn_eval_unary(nn_ctx *c)
{
    const nn_tensor *x = c->in[0];
    int32_t op = c->op->type;
    int rc = c->alloc(c, 0, x->rank, x->dims);
    if (rc) return rc;
    nn_tensor *y = c->out[0];
    size_t n = nn_numel(x);
    if (!nn_type_is_quant8(x->type)) {
        const float *xf = x->data;
        float *yf = y->data;
        for (size_t k = 0; k < n; k++) {
            float v = xf[k];
            switch (op) { /* float arithmetic, as the float kernels compute it */
            case ANEURALNETWORKS_RELU: yf[k] = v > 0 ? v : 0; break;
            case ANEURALNETWORKS_RELU1: yf[k] = v < -1 ? -1 : v > 1 ? 1 : v; break;
            case ANEURALNETWORKS_RELU6: yf[k] = v < 0 ? 0 : v > 6 ? 6 : v; break;
            case ANEURALNETWORKS_LOGISTIC: yf[k] = 1.0f / (1.0f + expf(-v)); break;
            case ANEURALNETWORKS_TANH: yf[k] = tanhf(v); break;
            case ANEURALNETWORKS_RSQRT: yf[k] = 1.0f / sqrtf(v); break;
            default: yf[k] = (float)act(op, v);
            }
        }
        return OK;
    }
    if (op == ANEURALNETWORKS_RELU || op == ANEURALNETWORKS_RELU1 || op == ANEURALNETWORKS_RELU6) {
        int32_t qmin, qmax;
        nn_fuse_qrange(op - ANEURALNETWORKS_RELU + ANEURALNETWORKS_FUSED_RELU, y, &qmin, &qmax);
        for (size_t k = 0; k < n; k++) {
            int32_t q = nn_q_get(x, k);
            nn_q_set(y, k, q < qmin ? qmin : q > qmax ? qmax : q);
        }
        return OK;
    }
    if ((op == ANEURALNETWORKS_LOGISTIC || op == ANEURALNETWORKS_TANH) && fixed_point_act(c, op)) return OK;
    if (op == ANEURALNETWORKS_HARD_SWISH) {
        nn_hswish_params hp;
        if (!nn_fixed_hard_swish_params(x->scale, y->scale, &hp))
            return nn_fail(c, ANEURALNETWORKS_OP_FAILED, "HARD_SWISH output scale %g is below input scale / 128 (%g)",
                           (double)y->scale, (double)x->scale / 128);
        for (size_t k = 0; k < n; k++) nn_q_set(y, k, nn_fixed_hard_swish(nn_q_get(x, k) - x->zp, &hp) + y->zp);
        return OK;
    }
    for (size_t k = 0; k < n; k++) nn_q_set(y, k, nn_quantize(y, act(op, x->scale * (double)(nn_q_get(x, k) - x->zp))));
    return OK;
}

/* ---- PRELU ---- */

int nn_check_prelu(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 2 && c->n_out == 1, "%u inputs, %u outputs (takes 2 and 1)", c->n_in, c->n_out);
    int32_t t = c->in[0]->type;
    NN_CHECK(c,
             t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 ||
                 t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED,
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, c->in[1]->type == t && c->out[0]->type == t, "alpha and output must be %s", nn_type_name(t));
    uint32_t r, dims[NN_MAX_RANK * 2];
    NN_CHECK(c, c->in[0]->rank <= 4 && c->in[1]->rank <= 4, "rank above 4");
    return broadcast_shape(c, c->in[0], c->in[1], &r, dims);
}

int nn_eval_prelu(nn_ctx *c)
{
    const nn_tensor *x = c->in[0], *al = c->in[1];
    uint32_t r, dims[NN_MAX_RANK];
    int rc = broadcast_shape(c, x, al, &r, dims);
    if (rc || (rc = c->alloc(c, 0, r, dims))) return rc;
    nn_tensor *y = c->out[0];
    int quant = nn_type_is_quant8(x->type);
    int32_t m1 = 0, m2 = 0;
    int s1 = 0, s2 = 0;
    if (quant) {
        quantize_multiplier((double)x->scale / y->scale, &m1, &s1);
        quantize_multiplier((double)(x->scale * al->scale) / y->scale, &m2, &s2);
    }
    size_t sa[NN_MAX_RANK], sb[NN_MAX_RANK], stx = 1, sta = 1;
    for (int i = (int)r - 1; i >= 0; i--) {
        int ix = i - (int)(r - x->rank), iaa = i - (int)(r - al->rank);
        uint32_t dx = ix < 0 ? 1 : x->dims[ix], da = iaa < 0 ? 1 : al->dims[iaa];
        sa[i] = dx == 1 ? 0 : stx;
        sb[i] = da == 1 ? 0 : sta;
        stx *= dx, sta *= da;
    }
    uint32_t coord[NN_MAX_RANK] = {0};
    size_t ix = 0, ia = 0, n = nn_numel(y);
    for (size_t k = 0; k < n; k++) {
        if (quant) {
            int32_t v = nn_q_get(x, ix) - x->zp;
            int32_t o = v >= 0 ? mbqm(v, m1, s1) : mbqm(v * (nn_q_get(al, ia) - al->zp), m2, s2);
            nn_q_set(y, k, o + y->zp);
        } else {
            float v = ((const float *)x->data)[ix];
            ((float *)y->data)[k] = v >= 0 ? v : v * ((const float *)al->data)[ia];
        }
        for (int i = (int)r - 1; i >= 0; i--) {
            ix += sa[i], ia += sb[i];
            if (++coord[i] < dims[i]) break;
            ix -= sa[i] * dims[i], ia -= sb[i] * dims[i];
            coord[i] = 0;
        }
    }
    return OK;
}

/* ---- SOFTMAX, LOG_SOFTMAX ---- */

int nn_check_softmax(nn_ctx *c)
{
    int log = c->op->type == ANEURALNETWORKS_LOG_SOFTMAX;
    NN_CHECK(c, (log ? c->n_in == 3 : (c->n_in == 2 || c->n_in == 3)) && c->n_out == 1, "%u inputs, %u outputs",
             c->n_in, c->n_out);
    const nn_tensor *x = c->in[0], *y = c->out[0];
    int32_t t = x->type;
    int quant = t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || t == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED;
    NN_CHECK(c, t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16 || (quant && !log),
             "input type %s is not supported", nn_type_name(t));
    NN_CHECK(c, y->type == t, "output type %s differs from the input's %s", nn_type_name(y->type), nn_type_name(t));
    NN_CHECK(c,
             nn_is_type(c, 1, t == ANEURALNETWORKS_TENSOR_FLOAT16 ? ANEURALNETWORKS_FLOAT16 : ANEURALNETWORKS_FLOAT32),
             "input 1 (beta) must be %s", t == ANEURALNETWORKS_TENSOR_FLOAT16 ? "FLOAT16" : "FLOAT32");
    float beta;
    if (nn_param_f32(c, 1, &beta)) NN_CHECK(c, beta > 0, "beta %g must be > 0", (double)beta);
    if (c->n_in == 3) {
        NN_CHECK(c, nn_is_type(c, 2, ANEURALNETWORKS_INT32), "input 2 (axis) must be INT32");
        if (c->level < 29) c->level = 29;
    } else if (x->rank && x->rank != 2 && x->rank != 4 && c->level < 29) {
        c->level = 29; /* level 27 takes rank 2 or 4 only */
    }
    NN_CHECK(c, x->rank <= 4, "rank %u above 4", x->rank);
    if (quant) return fixed_out_quant(c, x, y, 1.0 / 256, 0);
    return OK;
}

/* Android's quantized SOFTMAX (softmaxQuant8 / softmaxQuant8Impl, TFLite's integer softmax): differences to the
 * maximum rescaled to Q5.26 by beta * in_scale * 2^26 (QuantizeMultiplierGreaterThanOne, capped at 2^31 - 1),
 * those below -CalculateInputRadius(5, shift) dropped, exps summed in Q12.19, the sum's reciprocal by gemmlowp's
 * Newton-Raphson, each output exp * reciprocal divided by 2^(num_bits_over_unit + 23) with rounding. */
typedef struct softmax_q {
    int32_t mult, shift, diff_min;
} softmax_q;

static int quantize_multiplier_gt1(double real, int32_t *m, int32_t *shift)
{
    if (!(real > 1)) return 0;
    int e;
    double q = frexp(real, &e);
    int64_t f = (int64_t)round(q * 2147483648.0);
    if (f == 2147483648LL) f /= 2, e++;
    *m = (int32_t)f, *shift = e;
    return 1;
}

static int32_t input_radius(int int_bits, int shift)
{
    double max_rescaled = 1.0 * ((1 << int_bits) - 1) * (double)(1LL << (31 - int_bits)) / (double)(1LL << shift);
    return (int32_t)floor(max_rescaled);
}

static int softmax_fixed_setup(nn_ctx *c, float beta, softmax_q *q)
{
    double real = fmin(1.0 * beta * c->in[0]->scale * (double)(1 << 26), 2147483647.0);
    if (!quantize_multiplier_gt1(real, &q->mult, &q->shift))
        return nn_fail(c, ANEURALNETWORKS_OP_FAILED, "beta * input scale %g is below 2^-26", real / (1 << 26));
    q->diff_min = -input_radius(5, q->shift);
    return OK;
}

static void softmax_fixed(const nn_tensor *x, nn_tensor *y, size_t base, size_t len, size_t inner, const softmax_q *q)
{
    int u8 = x->type == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM;
    int32_t mx = u8 ? 0 : -128, sum = 0;
    for (size_t k = 0; k < len; k++) mx = nn_q_get(x, base + k * inner) > mx ? nn_q_get(x, base + k * inner) : mx;
    for (size_t k = 0; k < len; k++) {
        int32_t d = nn_q_get(x, base + k * inner) - mx;
        if (d < q->diff_min) continue;
        int32_t e =
            nn_fixed_exp_negative(par_requant_srdhm((int32_t)((int64_t)d * ((int64_t)1 << q->shift)), q->mult), 5);
        sum = (int32_t)((uint32_t)sum + (uint32_t)par_requant_rdivpot(e, 12)); /* Rescale<12> */
    }
    uint32_t fixed_sum = (uint32_t)sum;
    int headroom = __builtin_clz(fixed_sum);
    int32_t bits_over_unit = 12 - headroom;
    int32_t shifted_minus_one = (int32_t)((fixed_sum << headroom) - (1u << 31));
    int32_t scale = nn_fixed_one_over_one_plus_x(shifted_minus_one);
    for (size_t k = 0; k < len; k++) {
        int32_t d = nn_q_get(x, base + k * inner) - mx, o;
        if (d < q->diff_min) {
            o = u8 ? 0 : -128;
        } else {
            int32_t e =
                nn_fixed_exp_negative(par_requant_srdhm((int32_t)((int64_t)d * ((int64_t)1 << q->shift)), q->mult), 5);
            o = par_requant_rdivpot(par_requant_srdhm(scale, e), bits_over_unit + 31 - 8) - (u8 ? 0 : 128);
        }
        nn_q_set(y, base + k * inner, o);
    }
}

int nn_eval_softmax(nn_ctx *c)
{
    int log = c->op->type == ANEURALNETWORKS_LOG_SOFTMAX;
    const nn_tensor *x = c->in[0];
    float beta = 1;
    int32_t axis = -1;
    nn_param_f32(c, 1, &beta);
    if (c->n_in == 3) nn_param_i32(c, 2, &axis);
    int32_t r = (int32_t)x->rank;
    NN_CHECK(c, r >= 1 && axis >= -r && axis < r, "axis %d outside [-%d, %d)", (int)axis, (int)r, (int)r);
    if (axis < 0) axis += r;
    int rc = c->alloc(c, 0, x->rank, x->dims);
    if (rc) return rc;
    nn_tensor *y = c->out[0];
    size_t outer = 1, inner = 1, len = x->dims[axis];
    for (int32_t i = 0; i < axis; i++) outer *= x->dims[i];
    for (int32_t i = axis + 1; i < r; i++) inner *= x->dims[i];
    int quant = nn_type_is_quant8(x->type);
    softmax_q sq = {0, 0, 0};
    if (quant && (rc = softmax_fixed_setup(c, beta, &sq))) return rc;
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            size_t base = o * len * inner + in;
            if (quant) {
                softmax_fixed(x, y, base, len, inner, &sq);
                continue;
            }
            const float *xf = x->data;
            float *yf = y->data, mx = -INFINITY, sum = 0;
            for (size_t k = 0; k < len; k++) mx = fmaxf(mx, xf[base + k * inner]);
            for (size_t k = 0; k < len; k++) sum += expf((xf[base + k * inner] - mx) * beta);
            for (size_t k = 0; k < len; k++) {
                float z = (xf[base + k * inner] - mx) * beta;
                yf[base + k * inner] = log ? z - logf(sum) : expf(z) / sum;
            }
        }
    return OK;
}

/* ---- QUANTIZE, DEQUANTIZE ---- */

int nn_check_quantize(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 1 && c->n_out == 1, "%u inputs, %u outputs (takes 1 and 1)", c->n_in, c->n_out);
    int32_t t = c->in[0]->type, o = c->out[0]->type;
    NN_CHECK(c, t == ANEURALNETWORKS_TENSOR_FLOAT32 || t == ANEURALNETWORKS_TENSOR_FLOAT16,
             "input type %s is not "
             "TENSOR_FLOAT32 or TENSOR_FLOAT16",
             nn_type_name(t));
    NN_CHECK(c, o == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM || o == ANEURALNETWORKS_TENSOR_QUANT8_ASYMM_SIGNED,
             "output type %s is not an asymmetric quant8 type", nn_type_name(o));
    return OK;
}

/* Android's quantize: zeroPoint + round(x / scale) (half away from zero), clamped. */
int nn_eval_quantize(nn_ctx *c)
{
    const nn_tensor *x = c->in[0];
    int rc = c->alloc(c, 0, x->rank, x->dims);
    if (rc) return rc;
    size_t n = nn_numel(x);
    for (size_t k = 0; k < n; k++) nn_q_set(c->out[0], k, nn_quantize(c->out[0], ((const float *)x->data)[k]));
    return OK;
}

int nn_check_dequantize(nn_ctx *c)
{
    NN_CHECK(c, c->n_in == 1 && c->n_out == 1, "%u inputs, %u outputs (takes 1 and 1)", c->n_in, c->n_out);
    int32_t t = c->in[0]->type, o = c->out[0]->type;
    NN_CHECK(c, nn_type_is_quant8(t), "input type %s is not a quant8 type", nn_type_name(t));
    NN_CHECK(c, o == ANEURALNETWORKS_TENSOR_FLOAT32 || o == ANEURALNETWORKS_TENSOR_FLOAT16,
             "output type %s is not TENSOR_FLOAT32 or TENSOR_FLOAT16", nn_type_name(o));
    return OK;
}

int nn_eval_dequantize(nn_ctx *c)
{
    const nn_tensor *x = c->in[0];
    int rc = c->alloc(c, 0, x->rank, x->dims);
    if (rc) return rc;
    size_t n = nn_numel(x), inner = 1;
    int per_channel = x->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL;
    if (per_channel)
        for (uint32_t i = x->ch_dim + 1; i < x->rank; i++) inner *= x->dims[i];
    for (size_t k = 0; k < n; k++) {
        float s = per_channel ? x->ch_scales[(k / inner) % x->ch_count] : x->scale;
        int32_t zp = per_channel ? 0 : x->zp;
        ((float *)c->out[0]->data)[k] = (float)(nn_q_get(x, k) - zp) * s;
    }
    return OK;
}
