/*
 * ops_pool.c - the cpu backend's pooling, reduction and resampling ops on NHWC tensors: max_pool2d, avg_pool2d
 * (count_include_pad, ceil_mode), adaptive_avg_pool2d, global_avg_pool2d, mean, sum, amax, amin and prod over any axes (any
 * layout), argmax and argmin along one axis (any layout, i32 out), and upsample nearest, nearest-exact, bilinear and bicubic.
 *
 * In NHWC every window is a set of pixels, each a contiguous run of C channels: the inner loops run over channels
 * (vectorized by the compiler) and the output pixels are split across the thread pool, each written by exactly one
 * task, so results do not depend on the thread count. Sums are f32 in window order. Max pooling and nearest
 * upsampling are selections: every index is computed exactly. Ops never allocate at run time.
 */
#include <math.h>
#include <stdlib.h>

#include "plan_util.h"

static void free_state(void *s)
{
    free(s);
}

/* ---------------------------------------------------------------------------------------------------------------
 * 2-D pooling. Output sizes (with ceil_mode and the dropped last window) come from the shape-inferred graph.
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct pool_state {
    int32_t kind;                       /* CPU_POOL_* */
    int64_t N, H, W, C, OH, OW;
    int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    int include_pad;
    const float *x;
    float *y;
} pool_state;

/* One output row (n, oh) of every kind but global. */
static void pool_row(void *ctx, size_t task)
{
    const pool_state *st = ctx;
    const int64_t n = (int64_t)task / st->OH, oh = (int64_t)task % st->OH;
    const int64_t H = st->H, W = st->W, C = st->C;
    const float *x = st->x + n * H * W * C;
    for (int64_t ow = 0; ow < st->OW; ow++) {
        float *y = st->y + ((n * st->OH + oh) * st->OW + ow) * C;
        if (st->kind == CPU_POOL_MAX) {
            /* padding never wins: only in-image taps are read; a NaN wins and stays (PyTorch), as in red_acc */
            for (int64_t c = 0; c < C; c++) y[c] = -INFINITY;
            for (int64_t i = 0; i < st->kh; i++) {
                const int64_t ih = oh * st->sh - st->pt + i * st->dh;
                if (ih < 0 || ih >= H) continue;
                for (int64_t j = 0; j < st->kw; j++) {
                    const int64_t iw = ow * st->sw - st->pl + j * st->dw;
                    if (iw < 0 || iw >= W) continue;
                    const float *xp = x + (ih * W + iw) * C;
                    for (int64_t c = 0; c < C; c++) y[c] = (xp[c] > y[c] || xp[c] != xp[c]) ? xp[c] : y[c];
                }
            }
            continue;
        }
        int64_t h0, h1, w0, w1, divisor;
        if (st->kind == CPU_POOL_AVG) {
            /* PyTorch: the window clipped to the padded extent [-pt, H + pb) gives the count_include_pad divisor */
            h0 = oh * st->sh - st->pt, w0 = ow * st->sw - st->pl;
            h1 = h0 + st->kh < H + st->pb ? h0 + st->kh : H + st->pb;
            w1 = w0 + st->kw < W + st->pr ? w0 + st->kw : W + st->pr;
            const int64_t padded = (h1 - h0) * (w1 - w0);
            h0 = h0 > 0 ? h0 : 0, w0 = w0 > 0 ? w0 : 0;
            h1 = h1 < H ? h1 : H, w1 = w1 < W ? w1 : W;
            divisor = st->include_pad ? padded : (h1 - h0) * (w1 - w0);
        } else { /* adaptive: rows [floor(oh H / OH), ceil((oh + 1) H / OH)) in integers */
            h0 = oh * H / st->OH, h1 = ((oh + 1) * H + st->OH - 1) / st->OH;
            w0 = ow * W / st->OW, w1 = ((ow + 1) * W + st->OW - 1) / st->OW;
            divisor = (h1 - h0) * (w1 - w0);
        }
        for (int64_t c = 0; c < C; c++) y[c] = 0.0f;
        for (int64_t ih = h0; ih < h1; ih++)
            for (int64_t iw = w0; iw < w1; iw++) {
                const float *xp = x + (ih * W + iw) * C;
                for (int64_t c = 0; c < C; c++) y[c] += xp[c];
            }
        const float dv = (float)divisor;
        for (int64_t c = 0; c < C; c++) y[c] = y[c] / dv;
    }
}

/* global: one task per image; the sum over pixels runs in pixel order for every channel at once. */
static void pool_global(void *ctx, size_t n)
{
    const pool_state *st = ctx;
    const int64_t HW = st->H * st->W, C = st->C;
    const float *x = st->x + (int64_t)n * HW * C;
    float *y = st->y + (int64_t)n * C;
    for (int64_t c = 0; c < C; c++) y[c] = 0.0f;
    for (int64_t i = 0; i < HW; i++)
        for (int64_t c = 0; c < C; c++) y[c] += x[i * C + c];
    const float dv = (float)HW;
    for (int64_t c = 0; c < C; c++) y[c] = y[c] / dv;
}

static void run_pool(const cpu_plan *p, const cpu_step *s)
{
    pool_state *st = s->state;
    st->x = p->t[s->in[0]].data;
    st->y = p->t[s->out].data;
    if (st->kind == CPU_POOL_GLOBAL) cpu_parallel(p, pool_global, st, (size_t)st->N);
    else cpu_parallel(p, pool_row, st, (size_t)(st->N * st->OH));
}

par_status cpu_lower_pool2d(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    if (x->rank != 4 || y->rank != 4) return par_msgf(msg, PAR_ERROR, "%s: input must be rank 4", n->op);
    pool_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    st->kind = s->variant;
    st->N = x->dims[0], st->C = x->dims[1], st->H = x->dims[2], st->W = x->dims[3];
    st->OH = y->dims[2], st->OW = y->dims[3];
    st->kh = par_attr_ints_at(n, "kernel", 0, 1), st->kw = par_attr_ints_at(n, "kernel", 1, 1);
    st->sh = par_attr_ints_at(n, "stride", 0, 1), st->sw = par_attr_ints_at(n, "stride", 1, 1);
    st->dh = par_attr_ints_at(n, "dilation", 0, 1), st->dw = par_attr_ints_at(n, "dilation", 1, 1);
    st->pt = par_attr_ints_at(n, "padding", 0, 0), st->pl = par_attr_ints_at(n, "padding", 1, 0);
    st->pb = par_attr_ints_at(n, "padding", 2, 0), st->pr = par_attr_ints_at(n, "padding", 3, 0);
    st->include_pad = par_attr_int(n, "count_include_pad", 1) != 0;
    if (st->kind != CPU_POOL_GLOBAL && (st->sh < 1 || st->sw < 1 || st->kh < 1 || st->kw < 1))
        return par_msgf(msg, PAR_ERROR, "%s: kernel and stride must be >= 1", n->op);
    s->run = run_pool;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * mean, sum, amax and amin over axes, any layout: y is set to the identity (0, -inf for amax, +inf for amin), every x
 * element is accumulated into the y element it reduces to (walking x in its physical order, y strided with 0 along
 * reduced axes), then mean divides by the count. amax and amin propagate NaN (PyTorch): once a NaN is held,
 * `v > acc` (`v < acc`) is false for every later v and the NaN stays. One thread: the order of the sums is fixed.
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct mean_state {
    int32_t kind;                       /* CPU_RED_* */
    int32_t rank;
    int64_t dims[PAR_MAX_RANK], xs[PAR_MAX_RANK], ys[PAR_MAX_RANK];
    int64_t count;
} mean_state;

static inline float red_acc(int32_t kind, float acc, float v)
{
    if (kind == CPU_RED_AMIN) return (v < acc || v != v) ? v : acc;
    if (kind == CPU_RED_PROD) return acc * v;
    if (kind != CPU_RED_AMAX) return acc + v;
    return (v > acc || v != v) ? v : acc;
}

static void run_mean(const cpu_plan *p, const cpu_step *s)
{
    const mean_state *st = s->state;
    const cpu_tensor *yt = &p->t[s->out];
    const float *x = p->t[s->in[0]].data;
    float *y = yt->data;
    const int32_t kind = st->kind;
    const int sel = kind == CPU_RED_AMAX || kind == CPU_RED_AMIN || kind == CPU_RED_PROD; /* through red_acc, not a plain sum */
    const float init = kind == CPU_RED_AMAX ? -INFINITY : kind == CPU_RED_AMIN ? INFINITY : kind == CPU_RED_PROD ? 1.0f : 0.0f;
    for (int64_t i = 0; i < yt->numel; i++) y[i] = init;
    const int32_t r = st->rank;
    const int64_t n = st->dims[r - 1], xsi = st->xs[r - 1], ysi = st->ys[r - 1];
    int64_t idx[PAR_MAX_RANK] = {0}, outer = 1, xo = 0, yo = 0;
    for (int32_t i = 0; i < r - 1; i++) outer *= st->dims[i];
    for (int64_t o = 0; o < outer; o++) {
        if (ysi == 0 && !sel) {
            float acc = y[yo];
            for (int64_t k = 0; k < n; k++) acc += x[xo + k * xsi];
            y[yo] = acc;
        } else if (ysi == 0) {
            float acc = y[yo];
            for (int64_t k = 0; k < n; k++) acc = red_acc(kind, acc, x[xo + k * xsi]);
            y[yo] = acc;
        } else if (!sel) {
            for (int64_t k = 0; k < n; k++) y[yo + k * ysi] += x[xo + k * xsi];
        } else {
            for (int64_t k = 0; k < n; k++) y[yo + k * ysi] = red_acc(kind, y[yo + k * ysi], x[xo + k * xsi]);
        }
        for (int32_t i = r - 2; i >= 0; i--) {
            xo += st->xs[i], yo += st->ys[i];
            if (++idx[i] < st->dims[i]) break;
            xo -= st->xs[i] * st->dims[i], yo -= st->ys[i] * st->dims[i];
            idx[i] = 0;
        }
    }
    if (kind != CPU_RED_MEAN) return;
    const float dv = (float)st->count;
    for (int64_t i = 0; i < yt->numel; i++) y[i] = y[i] / dv;
}

par_status cpu_lower_reduce(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    int reduced[PAR_MAX_RANK] = {0};
    for (int32_t i = 0; i < par_attr_count(n, "axes"); i++) {
        int64_t ax = par_attr_ints_at(n, "axes", i, 0);
        if (ax < 0) ax += x->rank;
        if (ax < 0 || ax >= x->rank) return par_msgf(msg, PAR_ERROR, "attribute 'axes': %lld out of range", (long long)ax);
        reduced[ax] = 1;
    }
    const int keep = par_attr_int(n, "keepdims", 0) != 0;
    mean_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    st->kind = s->variant;
    /* y's stride seen from each x dim: 0 where reduced; y dims follow x's, minus the reduced ones without keepdims */
    int64_t xs[PAR_MAX_RANK], ys[PAR_MAX_RANK], d[PAR_MAX_RANK];
    int32_t yd = 0;
    st->count = 1;
    for (int32_t i = 0; i < x->rank; i++) {
        xs[i] = x->strides[i];
        d[i] = x->dims[i];
        if (reduced[i]) {
            ys[i] = 0;
            st->count *= x->dims[i];
            if (keep) yd++;
        } else {
            ys[i] = y->rank > 0 ? y->strides[yd] : 0;
            yd++;
        }
    }
    /* walk x in its physical order: dims by x stride, outermost first; size-1 dims dropped */
    int32_t r = 0;
    for (int32_t i = 0; i < x->rank; i++) {
        if (d[i] == 1) continue;
        st->dims[r] = d[i], st->xs[r] = xs[i], st->ys[r] = ys[i];
        r++;
    }
    for (int32_t i = 1; i < r; i++)
        for (int32_t j = i; j > 0 && st->xs[j] > st->xs[j - 1]; j--) {
            int64_t t;
            t = st->dims[j], st->dims[j] = st->dims[j - 1], st->dims[j - 1] = t;
            t = st->xs[j], st->xs[j] = st->xs[j - 1], st->xs[j - 1] = t;
            t = st->ys[j], st->ys[j] = st->ys[j - 1], st->ys[j - 1] = t;
        }
    if (r == 0) st->dims[0] = 1, st->xs[0] = 1, st->ys[0] = 0, r = 1;
    st->rank = r;
    s->run = run_mean;
    return PAR_OK;
}

/* argmax / argmin along one axis, any layout: per output element, a walk of the axis along x's physical stride,
 * keeping the first (the last with select_last) of equal extrema; a NaN wins, the first (last) one. The index is
 * written as i32 into the raw, row-major output. */
typedef struct arg_state {
    int min, last;
    int32_t rank;                       /* x's rank; the axis */
    int32_t axis;
    int64_t dims[PAR_MAX_RANK], xs[PAR_MAX_RANK];
} arg_state;

static void run_arg(const cpu_plan *p, const cpu_step *s)
{
    const arg_state *st = s->state;
    const float *x = p->t[s->in[0]].data;
    int32_t *y = (int32_t *)p->t[s->out].data;
    const int64_t n = st->dims[st->axis], xa = st->xs[st->axis];
    int64_t outer = 1;
    for (int32_t d = 0; d < st->rank; d++)
        if (d != st->axis) outer *= st->dims[d];
    for (int64_t o = 0; o < outer; o++) { /* o: row-major over the kept dims, which is y's row-major order */
        int64_t rem = o, base = 0;
        for (int32_t d = st->rank - 1; d >= 0; d--) {
            if (d == st->axis) continue;
            base += (rem % st->dims[d]) * st->xs[d];
            rem /= st->dims[d];
        }
        int64_t best = 0;
        float b = x[base];
        for (int64_t k = 1; k < n; k++) {
            const float a = x[base + k * xa];
            if (b != b && !(a != a && st->last)) continue;
            const int better = st->min ? a < b : a > b;
            if (a != a || better || (a == b && st->last)) best = k, b = a;
        }
        y[o] = (int32_t)best;
    }
}

par_status cpu_lower_arg(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]];
    arg_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = free_state;
    int64_t ax = par_attr_int(n, "axis", 0);
    if (ax < 0) ax += x->rank;
    if (ax < 0 || ax >= x->rank) return par_msgf(msg, PAR_ERROR, "attribute 'axis': out of range");
    st->min = s->variant == CPU_ARG_MIN;
    st->last = par_attr_int(n, "select_last", 0) != 0;
    st->rank = x->rank;
    st->axis = (int32_t)ax;
    for (int32_t d = 0; d < x->rank; d++) st->dims[d] = x->dims[d], st->xs[d] = x->strides[d];
    s->run = run_arg;
    return PAR_OK;
}

/* ---------------------------------------------------------------------------------------------------------------
 * upsample_nearest2d / upsample_nearest_exact2d / upsample_bilinear2d / upsample_bicubic2d, NHWC: per output pixel,
 * one source pixel (nearest, nearest-exact), 2 x 2 (bilinear) or 4 x 4 (bicubic), C channels each. The source
 * indices and weights of every output row and column are computed at prepare, as docs/ops.md defines them (nearest
 * indices in integers or double; bilinear and bicubic coordinates and weights in f32 as PyTorch does), with
 * PyTorch's same-size rules: for nearest and bilinear an axis whose output size equals its input size is copied,
 * whatever the scale (and nearest maps dst to dst / 2 at twice the size); bicubic has none (it resamples with the
 * scale).
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct axis_map {
    int64_t i[4]; /* source indices (taps), clamped to [0, in - 1] */
    float w[4];   /* their weights */
} axis_map;

typedef struct upsample_state {
    int kind, taps;
    int64_t N, H, W, C, OH, OW;
    axis_map *mh, *mw; /* OH and OW entries */
    const float *x;
    float *y;
} upsample_state;

static void upsample_destroy(void *p)
{
    upsample_state *st = p;
    if (!st) return;
    free(st->mh);
    free(st);
}

#define CUBIC_A (-0.75f)
static float cc1(float x) { return ((CUBIC_A + 2.0f) * x - (CUBIC_A + 3.0f)) * x * x + 1.0f; }
static float cc2(float x) { return ((CUBIC_A * x - 5.0f * CUBIC_A) * x + 8.0f * CUBIC_A) * x - 4.0f * CUBIC_A; }

static int64_t clamp_tap(int64_t i, int64_t in) { return i < 0 ? 0 : i > in - 1 ? in - 1 : i; }

static axis_map map_axis(const par_node *n, int kind, int axis, int64_t dst, int64_t in, int64_t out)
{
    const int has_size = par_attr_count(n, "size") == 2;
    const double inv_scale = 1.0 / par_attr_floats_at(n, "scale", axis, 1.0);
    axis_map m = {{0, 0, 0, 0}, {1.0f, 0.0f, 0.0f, 0.0f}};
    if (kind == CPU_UP_NEAREST || kind == CPU_UP_NEAREST_EXACT) {
        int64_t src;
        if (kind == CPU_UP_NEAREST && (out == in || out == 2 * in)) src = out == in ? dst : dst / 2;
        else if (kind == CPU_UP_NEAREST) src = has_size ? dst * in / out : (int64_t)floor((double)dst * inv_scale);
        else src = has_size ? (2 * dst + 1) * in / (2 * out) : (int64_t)floor(((double)dst + 0.5) * inv_scale);
        m.i[0] = src < in - 1 ? src : in - 1;
        return m;
    }
    const int ac = par_attr_int(n, "align_corners", 0) != 0;
    float src;
    if (in == out && kind == CPU_UP_BILINEAR) src = (float)dst; /* bilinear's same-size rule; bicubic has none */
    else if (ac) src = (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) * (float)dst;
    else src = (has_size ? (float)in / (float)out : (float)inv_scale) * ((float)dst + 0.5f) - 0.5f;
    if (kind == CPU_UP_BICUBIC) { /* taps floor(src) - 1 .. + 2, the source coordinate not clamped */
        const float f = floorf(src), t = src - f;
        for (int k = 0; k < 4; k++) m.i[k] = clamp_tap((int64_t)f - 1 + k, in);
        m.w[0] = cc2(t + 1.0f);
        m.w[1] = cc1(t);
        m.w[2] = cc1(1.0f - t);
        m.w[3] = cc2(2.0f - t);
        return m;
    }
    if (src < 0.0f) src = 0.0f;
    m.i[0] = (int64_t)src;
    if (m.i[0] > in - 1) m.i[0] = in - 1;
    m.i[1] = m.i[0] + 1 < in ? m.i[0] + 1 : in - 1;
    m.w[1] = src - (float)m.i[0];
    if (m.w[1] > 1.0f) m.w[1] = 1.0f;
    m.w[0] = 1.0f - m.w[1];
    return m;
}

static void upsample_row(void *ctx, size_t task)
{
    const upsample_state *st = ctx;
    const int64_t n = (int64_t)task / st->OH, oh = (int64_t)task % st->OH, C = st->C, W = st->W;
    const float *x = st->x + n * st->H * W * C;
    const axis_map h = st->mh[oh];
    for (int64_t ow = 0; ow < st->OW; ow++) {
        const axis_map w = st->mw[ow];
        float *y = st->y + ((n * st->OH + oh) * st->OW + ow) * C;
        if (st->taps == 1) {
            memcpy(y, x + (h.i[0] * W + w.i[0]) * C, (size_t)C * sizeof(float));
            continue;
        }
        if (st->taps == 2) {
            const float *a = x + (h.i[0] * W + w.i[0]) * C, *b = x + (h.i[0] * W + w.i[1]) * C;
            const float *c2 = x + (h.i[1] * W + w.i[0]) * C, *d = x + (h.i[1] * W + w.i[1]) * C;
            for (int64_t c = 0; c < C; c++) {
                const float top = w.w[0] * a[c] + w.w[1] * b[c];
                const float bottom = w.w[0] * c2[c] + w.w[1] * d[c];
                y[c] = h.w[0] * top + h.w[1] * bottom;
            }
            continue;
        }
        for (int64_t c = 0; c < C; c++) { /* bicubic: each row along w, then the rows along h */
            float acc = 0.0f;
            for (int a = 0; a < 4; a++) {
                const float *row = x + h.i[a] * W * C + c;
                const float r = w.w[0] * row[w.i[0] * C] + w.w[1] * row[w.i[1] * C] + w.w[2] * row[w.i[2] * C] +
                                w.w[3] * row[w.i[3] * C];
                acc += h.w[a] * r;
            }
            y[c] = acc;
        }
    }
}

static void run_upsample(const cpu_plan *p, const cpu_step *s)
{
    upsample_state *st = s->state;
    st->x = p->t[s->in[0]].data;
    st->y = p->t[s->out].data;
    cpu_parallel(p, upsample_row, st, (size_t)(st->N * st->OH));
}

par_status cpu_lower_upsample(cpu_plan *p, cpu_step *s, par_msg *msg)
{
    const par_node *n = s->node;
    const cpu_tensor *x = &p->t[s->in[0]], *y = &p->t[s->out];
    if (x->rank != 4) return par_msgf(msg, PAR_ERROR, "%s: input must be rank 4", n->op);
    upsample_state *st = calloc(1, sizeof *st);
    if (!st) return par_msgf(msg, PAR_ERROR, "out of memory");
    s->state = st;
    s->destroy = upsample_destroy;
    st->kind = s->variant;
    st->taps = st->kind == CPU_UP_BILINEAR ? 2 : st->kind == CPU_UP_BICUBIC ? 4 : 1;
    st->N = x->dims[0], st->C = x->dims[1], st->H = x->dims[2], st->W = x->dims[3];
    st->OH = y->dims[2], st->OW = y->dims[3];
    st->mh = malloc((size_t)(st->OH + st->OW) * sizeof *st->mh);
    if (!st->mh) return par_msgf(msg, PAR_ERROR, "out of memory");
    st->mw = st->mh + st->OH;
    for (int64_t i = 0; i < st->OH; i++) st->mh[i] = map_axis(n, st->kind, 0, i, st->H, st->OH);
    for (int64_t i = 0; i < st->OW; i++) st->mw[i] = map_axis(n, st->kind, 1, i, st->W, st->OW);
    s->run = run_upsample;
    return PAR_OK;
}
