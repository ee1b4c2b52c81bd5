/*
 * decoder.c - a test plugin of tests/report/test_decoder.sh: the example backend (backends/example/, linked in whole,
 * its entry renamed by plugins.mk, as planted.c) with one planted bug of a decoder block, chosen by the knob bug=:
 *   rope    rope's pair layout confused: the interleaved pairs (x[2i], x[2i+1]) where the node asks for the
 *           half-split pairs (x[i], x[i + D/2]), and the other way round;
 *   causal  sdpa's causal mask one key late: query i also sees key i + 1;
 *   kv      slice_scatter writes src one row late, over rows [start + 1, start + len + 1) (the row past the end of
 *           the dimension dropped), row start keeping x's value;
 *   off     no bug: the example backend (the default).
 * Every node of the bug's op runs the planted kernel; every other node, and every other knob, is the example's.
 * The planted kernels are otherwise plain f32 loops, well within the budgets. Like every plugin it sees only the
 * public header.
 */
#include "ex_wrap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct dc_ctx {
    void *inner; /* the example backend's context */
    int bug;     /* index into BUGS */
} dc_ctx;

static void dc_rope(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0);
    const float *x = ex_in(p, n, 0), *cs = ex_in(p, n, 1), *sn = ex_in(p, n, 2);
    float *y = ex_out(p, n);
    const int64_t D = xv->dims[xv->rank - 1], S = xv->dims[xv->rank - 2], half = D / 2, rows = xv->numel / D;
    const int inter = par_attr_int(n, "interleaved", 0) == 0; /* the bug: the other layout */
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < half; i++) {
            const int64_t a = r * D + (inter ? 2 * i : i), b = r * D + (inter ? 2 * i + 1 : i + half);
            const float c = cs[(r % S) * half + i], s = sn[(r % S) * half + i];
            const float xa = x[a], xb = x[b];
            y[a] = xa * c - xb * s;
            y[b] = xb * c + xa * s;
        }
}

static void dc_sdpa(const ex_plan *p, const par_node *n)
{
    const par_value *qv = ex_in_value(p, n, 0), *kv = ex_in_value(p, n, 1), *vv = ex_in_value(p, n, 2);
    const float *q = ex_in(p, n, 0), *k = ex_in(p, n, 1), *v = ex_in(p, n, 2), *mask = ex_in(p, n, 3);
    float *y = ex_out(p, n);
    const int64_t B = qv->dims[0], Hq = qv->dims[1], Sq = qv->dims[2], D = qv->dims[3];
    const int64_t Hkv = kv->dims[1], Skv = kv->dims[2], Dv = vv->dims[3];
    const double sa = par_attr_float(n, "scale", 0.0);
    const float scale = (float)(sa > 0 ? sa : 1.0 / sqrt((double)D));
    const int causal = par_attr_int(n, "is_causal", 0) != 0;
    int64_t ms[4] = {0, 0, 0, 0};
    if (mask) ex_broadcast_strides(ex_in_value(p, n, 3)->dims, ex_in_value(p, n, 3)->rank, 4, ms);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < Sq; i++) {
                const int64_t hk = h / (Hq / Hkv), kv0 = (b * Hkv + hk) * Skv;
                const int64_t nk = causal ? (i + 2 < Skv ? i + 2 : Skv) : Skv; /* the bug: i + 2, not i + 1 */
                const float *qi = q + ((b * Hq + h) * Sq + i) * D;
                float *yi = y + ((b * Hq + h) * Sq + i) * Dv, m = -INFINITY, l = 0.0f;
                for (int64_t d = 0; d < Dv; d++) yi[d] = 0.0f;
                for (int pass = 0; pass < 2; pass++)
                    for (int64_t j = 0; j < nk; j++) {
                        float t = 0.0f;
                        for (int64_t d = 0; d < D; d++) t += qi[d] * k[(kv0 + j) * D + d];
                        t *= scale;
                        if (mask) t += mask[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
                        if (pass == 0) {
                            m = t > m ? t : m;
                            continue;
                        }
                        const float w = expf(t - m);
                        l += w;
                        for (int64_t d = 0; d < Dv; d++) yi[d] += w * v[(kv0 + j) * Dv + d];
                    }
                for (int64_t d = 0; d < Dv; d++) yi[d] /= l;
            }
}

static void dc_slice_scatter(const ex_plan *p, const par_node *n)
{
    const par_value *xv = ex_in_value(p, n, 0), *sv = ex_in_value(p, n, 1);
    const float *x = ex_in(p, n, 0), *src = ex_in(p, n, 1);
    float *y = ex_out(p, n);
    int64_t dim = par_attr_int(n, "dim", 0);
    if (dim < 0) dim += xv->rank;
    const int64_t start = par_attr_int(n, "start", 0) + 1; /* the bug: one row late */
    const int64_t len = sv->dims[dim], extent = xv->dims[dim];
    const int64_t outer = ex_prod(xv->dims, 0, (int32_t)dim), inner = ex_prod(xv->dims, (int32_t)dim + 1, xv->rank);
    const int64_t rows = start + len <= extent ? len : extent - start;
    memcpy(y, x, (size_t)xv->numel * sizeof(float));
    for (int64_t o = 0; o < outer && rows > 0; o++)
        memcpy(y + (o * extent + start) * inner, src + o * len * inner, (size_t)(rows * inner) * sizeof(float));
}

static const struct {
    const char *name, *op;
    ex_kernel_fn fn;
} BUGS[] = {{"off", NULL, NULL},
            {"rope", "rope", dc_rope},
            {"causal", "sdpa", dc_sdpa},
            {"kv", "slice_scatter", dc_slice_scatter}};
enum { N_BUGS = sizeof BUGS / sizeof BUGS[0] };

static par_status dc_init(void **ctx, par_msg *msg)
{
    return exw_init(sizeof(dc_ctx), ctx, msg);
}

static par_status dc_set_knob(void *ctx, const char *key, const char *value, par_msg *msg)
{
    dc_ctx *c = ctx;
    if (strcmp(key, "bug") == 0) {
        for (int i = 0; i < N_BUGS; i++)
            if (strcmp(value, BUGS[i].name) == 0) {
                c->bug = i;
                return PAR_OK;
            }
        return par_msgf(msg, PAR_ERROR, "knob 'bug': '%s' is not off, rope, causal or kv", value);
    }
    return exw_knob(ctx, key, value, msg);
}

static size_t dc_describe(void *ctx, char *buf, size_t len)
{
    int need = snprintf(buf, len, "bug=%s", BUGS[((const dc_ctx *)ctx)->bug].name);
    return need < 0 ? 0 : (size_t)need;
}

static void *dc_get_proc(void *ctx, const char *name)
{
    if (strcmp(name, PAR_PROC_SET_KNOB) == 0) return (void *)(par_set_knob_fn)dc_set_knob;
    if (strcmp(name, PAR_PROC_DESCRIBE) == 0) return (void *)(par_describe_fn)dc_describe;
    (void)ctx;
    return NULL;
}

static par_status dc_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    dc_ctx *c = ctx;
    par_status st = inner_table->prepare(c->inner, g, prepared, msg);
    if (st != PAR_OK || !BUGS[c->bug].op) return st;
    ex_plan *p = *prepared;
    for (int32_t k = 0; k < g->n_nodes; k++)
        if (strcmp(g->nodes[k].op, BUGS[c->bug].op) == 0) p->kernels[k] = BUGS[c->bug].fn;
    return PAR_OK;
}

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
const par_backend *parity_backend_entry(uint32_t harness_api_version)
{
    return exw_entry(harness_api_version, "decoder", "the example backend with one planted decoder-block bug (a test)",
                     dc_init, NULL, dc_prepare, dc_get_proc);
}
