/*
 * attention.c - sweep specs of the decoder-block ops: rope (both pair layouts, Llama head widths 64 and 128, odd
 * position counts, a decode step at position 32, ranks 3 and 4, the cos and sin of the real rotary frequencies
 * theta_i = 10000^(-2i/D)), sdpa (multi-head, grouped-query and multi-query heads, prefill and decode shapes,
 * Sq != Skv, no mask, causal, an additive mask and a key-padding mask of -inf; the same attention as the decomposed
 * graph matmul -> scale -> mask (add, or masked_fill with -inf for causal) -> softmax -> matmul, so that a backend
 * that fuses is judged against one that does not; and a whole decoder block, prefill and decode step) and
 * slice_scatter (a KV-cache row block written at the start, the middle and the end, every dimension).
 *
 * The cos and sin tables and the masks are inputs computed here (constants of the case), never expected results.
 * It must not hold any op's semantics; the ops' rules are in docs/ops.md.
 */
#include "sweep_util.h"

#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------------------------------
 * rope
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct rope_pt {
    int rank, d[4], inter, pos0;
} rope_pt;

/* cos or sin [S, D/2] of (pos0 + s) 10000^(-2i/D), rounded to f32 once. */
static int32_t rope_table(par_case *c, const char *name, int sin_form, int64_t S, int64_t D, int pos0)
{
    const int64_t half = D / 2, dims[2] = {S, half};
    float *t = malloc((size_t)(S * half) * sizeof(float));
    if (!t) return -1;
    for (int64_t s = 0; s < S; s++)
        for (int64_t i = 0; i < half; i++) {
            double th = (double)(pos0 + s) * pow(10000.0, -2.0 * (double)i / (double)D);
            t[s * half + i] = (float)(sin_form ? sin(th) : cos(th));
        }
    int32_t v = par_case_const_data(c, name, PAR_DTYPE_F32, 2, dims, t);
    free(t);
    return v;
}

static void sweep_rope(par_sweep *s)
{
    /* {rank, dims..., pos0} */
    static const int SH[][6] = {{4, 1, 2, 7, 16, 0}, {4, 1, 4, 32, 64, 0}, {4, 2, 3, 5, 8, 3}, {4, 1, 8, 1, 64, 32},
                                {3, 2, 9, 32, 0, 0}, {4, 1, 32, 17, 128, 0}, {4, 1, 1, 3, 2, 0}, {4, 1, 8, 64, 64, 100}};
    enum { RQ = 4 };
    grid gr;
    grid_init(&gr, s, sizeof(rope_pt));
    for (int sh = 0; sh < (int)(sizeof SH / sizeof SH[0]); sh++)
        for (int inter = 0; inter < 2; inter++) {
            rope_pt p;
            memset(&p, 0, sizeof p);
            p.rank = SH[sh][0], p.inter = inter, p.pos0 = SH[sh][1 + p.rank];
            int64_t xd[4];
            for (int i = 0; i < p.rank; i++) p.d[i] = SH[sh][1 + i], xd[i] = p.d[i];
            if (!grid_take(&gr, &p, sh < RQ, su_numel(p.rank, xd), 0)) continue;
            char xs[64];
            su_shape(xs, sizeof xs, p.rank, xd);
            par_case *c = par_sweep_case(s, "rope", "rope(x=%s,interleaved=%d,pos=%d)", xs, inter, p.pos0);
            if (!c) continue;
            const int64_t S = xd[p.rank - 2], D = xd[p.rank - 1];
            int32_t in[3] = {par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, su_uniform(-1.0, 1.0)),
                             rope_table(c, "cos", 0, S, D, p.pos0), rope_table(c, "sin", 1, S, D, p.pos0)};
            par_attr at[1] = {par_a_int("interleaved", inter)};
            par_out_spec o = {"y", 0, 0.0f, 0};
            par_case_output(c, par_case_node(c, "rope", 3, in, 1, at, &o));
            par_sweep_done(s, c);
        }
    grid_free(&gr);
}

/* ---------------------------------------------------------------------------------------------------------------
 * sdpa, fused and decomposed
 * ------------------------------------------------------------------------------------------------------------- */
enum { M_NONE, M_CAUSAL, M_ADD, M_PAD, M_N };
static const char *const MASK[M_N] = {"none", "causal", "add", "pad"};

typedef struct sdpa_pt {
    int B, Hq, Hkv, Sq, Skv, D, Dv, mask, decomposed;
} sdpa_pt;

/* The key-padding mask [B, 1, 1, Skv]: -inf on the last min(3, Skv - 1) keys of sample 1 and beyond, 0 elsewhere
 * (sample 0 unpadded), so no row is all masked. */
static int32_t pad_mask(par_case *c, const sdpa_pt *p)
{
    const int64_t dims[4] = {p->B, 1, 1, p->Skv};
    float *m = calloc((size_t)(p->B * p->Skv), sizeof(float));
    if (!m) return -1;
    const int pad = p->Skv - 1 < 3 ? p->Skv - 1 : 3;
    for (int b = 0; b < p->B; b++)
        for (int j = p->Skv - pad; j < p->Skv; j++) m[b * p->Skv + j] = b > 0 || p->B == 1 ? -INFINITY : 0.0f;
    int32_t v = par_case_const_data(c, "mask", PAR_DTYPE_F32, 4, dims, m);
    free(m);
    return v;
}

/* k or v [B, Hkv, Skv, D] repeated to [B, Hq, Skv, D], each head G = Hq / Hkv times in a row (repeat_interleave):
 * reshape [B, Hkv, 1, Skv D], G copies concatenated on axis 2, reshape [B, Hq, Skv, D]. */
static int32_t repeat_heads(par_case *c, int32_t x, const sdpa_pt *p, int D)
{
    const int G = p->Hq / p->Hkv;
    if (G == 1) return x;
    int64_t r1[4] = {p->B, p->Hkv, 1, (int64_t)p->Skv * D}, r2[4] = {p->B, p->Hq, p->Skv, D};
    par_attr a1 = par_a_ints("shape", 4, r1), a2 = par_a_ints("shape", 4, r2), ax = par_a_int("axis", 2);
    int32_t flat = par_case_node(c, "reshape", 1, &x, 1, &a1, NULL);
    int32_t copies[8];
    for (int i = 0; i < G && i < 8; i++) copies[i] = flat;
    int32_t cat = par_case_node(c, "concat", G, copies, 1, &ax, NULL);
    return par_case_node(c, "reshape", 1, &cat, 1, &a2, NULL);
}

/* The decomposed graph of the same attention: softmax(q k^T * scale + mask) v. */
static int32_t sdpa_decomposed(par_case *c, const sdpa_pt *p, int32_t q, int32_t k, int32_t v, int32_t mask)
{
    const int64_t perm[4] = {0, 1, 3, 2}, one[1] = {1};
    const float scale = (float)(1.0 / sqrt((double)p->D));
    par_attr ap = par_a_ints("perm", 4, perm), ax = par_a_int("axis", -1);
    int32_t kr = repeat_heads(c, k, p, p->D), vr = repeat_heads(c, v, p, p->Dv);
    int32_t kt = par_case_node(c, "permute", 1, &kr, 1, &ap, NULL);
    int32_t mm[2] = {q, kt};
    int32_t sc[2] = {par_case_node(c, "matmul", 2, mm, 0, NULL, NULL),
                     par_case_const_data(c, "scale", PAR_DTYPE_F32, 1, one, &scale)};
    int32_t t = par_case_node(c, "mul", 2, sc, 0, NULL, NULL);
    if (mask >= 0) {
        int32_t tm[2] = {t, mask};
        t = par_case_node(c, p->mask == M_CAUSAL ? "masked_fill" : "add", 2, tm, p->mask == M_CAUSAL ? 1 : 0,
                          (par_attr[]){par_a_float("value", -INFINITY)}, NULL);
    }
    int32_t pr[2] = {par_case_node(c, "softmax", 1, &t, 1, &ax, NULL), vr};
    par_out_spec o = {"y", 0, 0.0f, 0};
    return par_case_node(c, "matmul", 2, pr, 0, NULL, &o);
}

/* The causal mask as masked_fill's bool mask [Sq, Skv]: 1 (filled with -inf) above the diagonal, j > i. */
static int32_t causal_bool(par_case *c, const sdpa_pt *p)
{
    const int64_t dims[2] = {p->Sq, p->Skv};
    uint8_t *m = malloc((size_t)(p->Sq * p->Skv));
    if (!m) return -1;
    for (int i = 0; i < p->Sq; i++)
        for (int j = 0; j < p->Skv; j++) m[i * p->Skv + j] = j > i;
    int32_t v = par_case_const_data(c, "causal", PAR_DTYPE_BOOL, 2, dims, m);
    free(m);
    return v;
}

static void sdpa_emit(grid *gr, sdpa_pt p, int quick)
{
    const int64_t qd[4] = {p.B, p.Hq, p.Sq, p.D}, kd[4] = {p.B, p.Hkv, p.Skv, p.D}, vd[4] = {p.B, p.Hkv, p.Skv, p.Dv};
    const int64_t macs = (int64_t)p.B * p.Hq * p.Sq * p.Skv * (p.D + p.Dv);
    const int64_t big = su_max64(su_max64(su_numel(4, qd), su_numel(4, kd)), (int64_t)p.B * p.Hq * p.Sq * p.Skv);
    if (!grid_take(gr, &p, quick, big, macs)) return;
    char qs[64], ks[64], vs[64];
    su_shape(qs, sizeof qs, 4, qd), su_shape(ks, sizeof ks, 4, kd), su_shape(vs, sizeof vs, 4, vd);
    par_case *c = par_sweep_case(gr->s, "sdpa", "sdpa(q=%s,k=%s,v=%s,mask=%s%s)", qs, ks, vs, MASK[p.mask],
                                 p.decomposed ? ",graph=decomposed" : "");
    if (!c) return;
    int32_t in[4] = {par_case_input(c, "q", PAR_DTYPE_F32, 4, qd, su_uniform(-1.0, 1.0)),
                     par_case_input(c, "k", PAR_DTYPE_F32, 4, kd, su_uniform(-1.0, 1.0)),
                     par_case_input(c, "v", PAR_DTYPE_F32, 4, vd, su_uniform(-1.0, 1.0)), -1};
    const int64_t md[2] = {p.Sq, p.Skv};
    if (p.mask == M_ADD) in[3] = par_case_input(c, "mask", PAR_DTYPE_F32, 2, md, su_uniform(-2.0, 0.0));
    if (p.mask == M_PAD) in[3] = pad_mask(c, &p);
    if (p.decomposed) {
        if (p.mask == M_CAUSAL) in[3] = causal_bool(c, &p);
        par_case_output(c, sdpa_decomposed(c, &p, in[0], in[1], in[2], in[3]));
    } else {
        par_attr at[1] = {par_a_int("is_causal", p.mask == M_CAUSAL)};
        par_out_spec o = {"y", 0, 0.0f, 0};
        par_case_output(c, par_case_node(c, "sdpa", in[3] >= 0 ? 4 : 3, in, 1, at, &o));
    }
    par_sweep_done(gr->s, c);
}

/* One Llama-style decoder block around the attention (the ops of this file with rms_norm, linear and silu): x [1, S,
 * 64], rms_norm, q k v projections to 4 query and 2 key/value heads of 16, rope (half-split) on q and k, attention,
 * the output projection and the residual, rms_norm, a SwiGLU MLP of 128 and the residual. Prefill: S = 8 causal
 * tokens at positions 0-7. Decode: one token at position 8, its k and v written by slice_scatter into caches [1, 2,
 * 9, 16] whose rows 0-7 are the past (inputs), attended whole. Weights normal(0, 1/sqrt(fan_in)). */
static int32_t lin(par_case *c, int32_t x, const char *w, int64_t out, int64_t in)
{
    const int64_t wd[2] = {out, in};
    int32_t xi[2] = {x, par_case_const(c, w, PAR_DTYPE_F32, 2, wd, su_weight())};
    return par_case_node(c, "linear", 2, xi, 0, NULL, NULL);
}

static int32_t norm(par_case *c, int32_t x, const char *w)
{
    const int64_t dm[1] = {64};
    int32_t xi[2] = {x, par_case_const(c, w, PAR_DTYPE_F32, 1, dm, su_uniform(0.5, 1.5))};
    par_attr a = par_a_ints("normalized_shape", 1, dm);
    return par_case_node(c, "rms_norm", 2, xi, 1, &a, NULL);
}

/* [1, S, H * 16] -> [1, H, S, 16] and back */
static int32_t heads(par_case *c, int32_t x, int64_t S, int64_t H, int split)
{
    const int64_t sh[4] = {1, S, H, 16}, fl[3] = {1, S, H * 16}, perm[4] = {0, 2, 1, 3};
    par_attr ap = par_a_ints("perm", 4, perm), as = par_a_ints("shape", split ? 4 : 3, split ? sh : fl);
    if (split) x = par_case_node(c, "reshape", 1, &x, 1, &as, NULL);
    x = par_case_node(c, "permute", 1, &x, 1, &ap, NULL);
    return split ? x : par_case_node(c, "reshape", 1, &x, 1, &as, NULL);
}

static void decoder_block(par_sweep *s, int decode)
{
    const int64_t S = decode ? 1 : 8, P = 8, xd[3] = {1, S, 64}, cd[4] = {1, 2, P + 1, 16};
    par_case *c = par_sweep_case(s, "sdpa", "sdpa(x=[1,%lld,64],heads=4/2,graph=decoder_block,step=%s)", (long long)S,
                                 decode ? "decode" : "prefill");
    if (!c) return;
    int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, 3, xd, su_uniform(-1.0, 1.0)), h = norm(c, x, "w_norm1");
    const int pos0 = decode ? (int)P : 0;
    int32_t cs = rope_table(c, "cos", 0, S, 16, pos0), sn = rope_table(c, "sin", 1, S, 16, pos0);
    int32_t q = heads(c, lin(c, h, "w_q", 64, 64), S, 4, 1), k = heads(c, lin(c, h, "w_k", 32, 64), S, 2, 1);
    int32_t v = heads(c, lin(c, h, "w_v", 32, 64), S, 2, 1);
    par_attr none = par_a_int("interleaved", 0);
    int32_t rq[3] = {q, cs, sn}, rk[3] = {k, cs, sn};
    q = par_case_node(c, "rope", 3, rq, 1, &none, NULL);
    k = par_case_node(c, "rope", 3, rk, 1, &none, NULL);
    if (decode) {
        par_attr at[2] = {par_a_int("dim", 2), par_a_int("start", P)};
        int32_t ck[2] = {par_case_input(c, "cache_k", PAR_DTYPE_F32, 4, cd, su_uniform(-1.0, 1.0)), k};
        int32_t cv[2] = {par_case_input(c, "cache_v", PAR_DTYPE_F32, 4, cd, su_uniform(-1.0, 1.0)), v};
        k = par_case_node(c, "slice_scatter", 2, ck, 2, at, NULL);
        v = par_case_node(c, "slice_scatter", 2, cv, 2, at, NULL);
    }
    par_attr causal = par_a_int("is_causal", !decode);
    int32_t at[3] = {q, k, v};
    int32_t r1[2] = {x, lin(c, heads(c, par_case_node(c, "sdpa", 3, at, 1, &causal, NULL), S, 4, 0), "w_o", 64, 64)};
    int32_t x1 = par_case_node(c, "add", 2, r1, 0, NULL, NULL), h2 = norm(c, x1, "w_norm2");
    int32_t g = lin(c, h2, "w_gate", 128, 64);
    int32_t gu[2] = {par_case_node(c, "silu", 1, &g, 0, NULL, NULL), lin(c, h2, "w_up", 128, 64)};
    int32_t r2[2] = {x1, lin(c, par_case_node(c, "mul", 2, gu, 0, NULL, NULL), "w_down", 64, 128)};
    par_out_spec o = {"y", 0, 0.0f, 0};
    par_case_output(c, par_case_node(c, "add", 2, r2, 0, NULL, &o));
    par_sweep_done(s, c);
}

static void sweep_sdpa(par_sweep *s)
{
    /* {B, Hq, Hkv, Sq, Skv, D, Dv}: heads 1:1, GQA 2:1 and 4:1, MQA; prefill, decode (Sq 1), Sq != Skv, Dv != D */
    static const int SH[][7] = {{1, 2, 2, 7, 7, 16, 16},  {1, 4, 2, 8, 8, 32, 32},   {2, 4, 1, 5, 9, 8, 12},
                                {1, 8, 2, 32, 32, 64, 64}, {1, 8, 2, 1, 33, 64, 64},  {2, 6, 3, 17, 17, 24, 24},
                                {1, 4, 4, 16, 48, 64, 64}, {1, 2, 1, 64, 64, 128, 128}, {1, 1, 1, 1, 1, 4, 4}};
    enum { SQ = 5 };
    grid gr;
    grid_init(&gr, s, sizeof(sdpa_pt));
    for (int sh = 0; sh < (int)(sizeof SH / sizeof SH[0]); sh++)
        for (int m = 0; m < M_N; m++)
            for (int dec = 0; dec < 2; dec++) {
                sdpa_pt p = {SH[sh][0], SH[sh][1], SH[sh][2], SH[sh][3], SH[sh][4], SH[sh][5], SH[sh][6], m, dec};
                /* quick: every mask on the quick shapes, the decomposed graph on two of them (GQA 2:1, MQA); the
                 * decomposed graph takes no -inf mask through add (the padding mask is the fused op's) */
                if (dec && m == M_PAD) continue;
                sdpa_emit(&gr, p, sh < SQ && (!dec || sh == 1 || sh == 2));
            }
    grid_free(&gr);
    decoder_block(s, 0);
    decoder_block(s, 1);
}

/* ---------------------------------------------------------------------------------------------------------------
 * slice_scatter
 * ------------------------------------------------------------------------------------------------------------- */
typedef struct scatter_pt {
    int rank, d[4], dim, len, start;
} scatter_pt;

static void sweep_slice_scatter(par_sweep *s)
{
    /* {rank, dims..., dim, len}: a KV cache [B, H, Smax, D] with a prefill block and a decode row, other dims */
    static const int SH[][7] = {{4, 1, 2, 16, 8, 2, 5}, {4, 1, 4, 40, 64, 2, 1}, {4, 2, 2, 9, 4, -2, 9},
                                {3, 6, 5, 7, 0, 0, 2},  {2, 7, 33, 1, 0, 0, 0}, {4, 1, 8, 64, 64, 2, 32},
                                {4, 3, 4, 5, 6, 3, 2},  {4, 2, 8, 3, 5, 1, 3}};
    enum { SQQ = 5 };
    grid gr;
    grid_init(&gr, s, sizeof(scatter_pt));
    for (int sh = 0; sh < (int)(sizeof SH / sizeof SH[0]); sh++)
        for (int where = 0; where < 3; where++) { /* start 0, the middle, the end */
            scatter_pt p;
            memset(&p, 0, sizeof p);
            p.rank = SH[sh][0];
            int64_t xd[4], sd[4];
            for (int i = 0; i < p.rank; i++) p.d[i] = SH[sh][1 + i], xd[i] = sd[i] = p.d[i];
            p.dim = SH[sh][1 + p.rank];
            const int d = p.dim < 0 ? p.dim + p.rank : p.dim;
            p.len = SH[sh][2 + p.rank] ? SH[sh][2 + p.rank] : 1;
            const int room = (int)xd[d] - p.len;
            p.start = where == 0 ? 0 : where == 1 ? room / 2 : room;
            if (where && room == 0) continue;
            sd[d] = p.len;
            if (!grid_take(&gr, &p, sh < SQQ, su_numel(p.rank, xd), 0)) continue;
            char xs[64], ss[64];
            su_shape(xs, sizeof xs, p.rank, xd), su_shape(ss, sizeof ss, p.rank, sd);
            par_case *c = par_sweep_case(s, "slice_scatter", "slice_scatter(x=%s,src=%s,dim=%d,start=%d)", xs, ss,
                                         p.dim, p.start);
            if (!c) continue;
            int32_t in[2] = {par_case_input(c, "x", PAR_DTYPE_F32, p.rank, xd, su_uniform(-1.0, 1.0)),
                             par_case_input(c, "src", PAR_DTYPE_F32, p.rank, sd, su_uniform(2.0, 3.0))};
            par_attr at[2] = {par_a_int("dim", p.dim), par_a_int("start", p.start)};
            par_out_spec o = {"y", 0, 0.0f, 0};
            par_case_output(c, par_case_node(c, "slice_scatter", 2, in, 2, at, &o));
            par_sweep_done(s, c);
        }
    grid_free(&gr);
}

void par_sweep_attention(par_sweep *s)
{
    sweep_rope(s);
    sweep_sdpa(s);
    sweep_slice_scatter(s);
}
