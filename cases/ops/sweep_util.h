/*
 * sweep_util.h - helpers private to the sweep specs of cases/ops/: the grid-point set that keeps a spec's sub-grids
 * from emitting one point twice, the level and size gates that select quick or full points, generator shorthands
 * and the quantize/dequantize wrappers of quantized cases.
 *
 * It must not hold any op's semantics or grid (those live in the spec files), and nothing outside cases/ops/ may
 * include it: the public protocol is cases/sweep.h.
 *
 * How a spec uses it: a grid point is a plain struct of ints (memset to 0 first, so padding bytes are equal); the
 * spec walks its sub-grids at full size and calls grid_take() for each point with a flag saying whether the point is
 * part of the quick grid. grid_take() answers 1 when the point belongs to the current level, fits the level's size
 * limits and was not taken before by another sub-grid. Quick's points are thereby a subset of full's by
 * construction, and a point shared by two sub-grids is emitted once (its ID is then unique by construction too; the
 * tests check that distinct points never format to the same ID).
 */
#ifndef PAR_SWEEP_UTIL_H
#define PAR_SWEEP_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/case.h"
#include "core/graph.h"
#include "cases/sweep.h"

/* Size limits per tensor (elements) and per case (multiply-adds). Quick cases run forked on a naive backend in
 * `make check`, so they stay small; full (nightly) cases may be larger. */
#define SU_QUICK_ELEMS 20000
#define SU_QUICK_MACS 1000000
#define SU_FULL_ELEMS 600000
#define SU_FULL_MACS 5000000

typedef struct grid {
    par_sweep *s;
    int full;          /* 1 at the full level */
    size_t cap, n;     /* open-addressing set of the points taken */
    uint64_t *hash;
    void **key;
    size_t key_size;
} grid;

static inline void grid_init(grid *g, par_sweep *s, size_t key_size)
{
    memset(g, 0, sizeof *g);
    g->s = s;
    g->full = par_sweep_level(s) == PAR_SUITE_FULL;
    g->key_size = key_size;
}

static inline void grid_free(grid *g)
{
    for (size_t i = 0; i < g->cap; i++) free(g->key[i]);
    free(g->hash);
    free(g->key);
    memset(g, 0, sizeof *g);
}

static inline uint64_t grid_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h | 1; /* 0 marks an empty slot */
}

/* Insert; 1 when new, 0 when present. On allocation failure the point counts as new (it may then repeat an ID,
 * which the uniqueness checks report; no crash). */
static inline int grid_insert(grid *g, const void *key)
{
    if (g->n * 2 >= g->cap) {
        size_t ncap = g->cap ? g->cap * 2 : 256;
        uint64_t *nh = calloc(ncap, sizeof *nh);
        void **nk = calloc(ncap, sizeof *nk);
        if (!nh || !nk) {
            free(nh);
            free(nk);
            return 1;
        }
        for (size_t i = 0; i < g->cap; i++) {
            if (!g->hash[i]) continue;
            size_t j = (size_t)(g->hash[i] & (ncap - 1));
            while (nh[j]) j = (j + 1) & (ncap - 1);
            nh[j] = g->hash[i];
            nk[j] = g->key[i];
        }
        free(g->hash);
        free(g->key);
        g->hash = nh;
        g->key = nk;
        g->cap = ncap;
    }
    uint64_t h = grid_hash(key, g->key_size);
    size_t j = (size_t)(h & (g->cap - 1));
    while (g->hash[j]) {
        if (g->hash[j] == h && memcmp(g->key[j], key, g->key_size) == 0) return 0;
        j = (j + 1) & (g->cap - 1);
    }
    void *copy = malloc(g->key_size);
    if (!copy) return 1;
    memcpy(copy, key, g->key_size);
    g->hash[j] = h;
    g->key[j] = copy;
    g->n++;
    return 1;
}

/* Should the point be emitted at this level? max_elems: the largest tensor of the case; macs: its multiply-adds. */
static inline int grid_take(grid *g, const void *key, int quick, int64_t max_elems, int64_t macs)
{
    if (g->full) {
        if (max_elems > SU_FULL_ELEMS || macs > SU_FULL_MACS) return 0;
    } else {
        if (!quick || max_elems > SU_QUICK_ELEMS || macs > SU_QUICK_MACS) return 0;
    }
    return grid_insert(g, key);
}

static inline int64_t su_max64(int64_t a, int64_t b) { return a > b ? a : b; }

static inline int64_t su_numel(int rank, const int64_t *d)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= d[i];
    return n;
}

/* "[1,3,7,7]" */
static inline const char *su_shape(char *buf, size_t len, int rank, const int64_t *d)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, len - k, "[");
    for (int i = 0; i < rank && k < len; i++) k += (size_t)snprintf(buf + k, len - k, i ? ",%lld" : "%lld", (long long)d[i]);
    if (k < len) snprintf(buf + k, len - k, "]");
    return buf;
}

static inline par_gen su_uniform(double lo, double hi)
{
    par_gen g = {.dist = PAR_DIST_UNIFORM, .a = lo, .b = hi};
    return g;
}

/* Weights: normal, std 1 / sqrt(fan_in), so that a dot product of unit-range inputs stays near unit range. */
static inline par_gen su_weight(void)
{
    par_gen g = {.dist = PAR_DIST_NORMAL, .a = 0.0, .b = 1.0, .fan_in = 1};
    return g;
}

/* Edge values (+-0, +-1, ties, tiny numbers, values near +-b) for the exact ops. */
static inline par_gen su_edge(double b)
{
    par_gen g = {.dist = PAR_DIST_EDGE, .a = 0.0, .b = b};
    return g;
}

static inline const char *su_dt(par_dtype dt) { return dt == PAR_DTYPE_QS8 ? "qs8" : "qu8"; }

/* Affine quantization covering [lo, hi] with the 256 steps of dt: scale = (hi - lo) / 255, zero point the integer
 * nearest to the image of 0 (qu8 in [0, 255], qs8 in [-128, 127]). */
static inline void su_qparams(par_dtype dt, double lo, double hi, float *scale, int32_t *zp)
{
    double s = (hi - lo) / 255.0;
    double qmin = dt == PAR_DTYPE_QS8 ? -128.0 : 0.0;
    double z = floor(qmin - lo / s + 0.5);
    if (z < qmin) z = qmin;
    if (z > qmin + 255.0) z = qmin + 255.0;
    *scale = (float)s;
    *zp = (int32_t)z;
}

/* An f32 graph input uniform in [lo, hi), quantized to dt with the parameters covering [lo, hi]; returns the
 * quantized value. */
static inline int32_t su_qinput(par_case *c, const char *name, par_dtype dt, int rank, const int64_t *dims, double lo,
                                double hi)
{
    char qname[64];
    float scale;
    int32_t zp;
    su_qparams(dt, lo, hi, &scale, &zp);
    int32_t x = par_case_input(c, name, PAR_DTYPE_F32, rank, dims, su_uniform(lo, hi));
    snprintf(qname, sizeof qname, "%s_q", name);
    par_out_spec o = {qname, dt, scale, zp};
    return par_case_node(c, "quantize", 1, &x, 0, NULL, &o);
}

/* The output spec of a quantized op whose real result lies in [lo, hi]. */
static inline par_out_spec su_qout_spec(const char *name, par_dtype dt, double lo, double hi)
{
    par_out_spec o = {name, dt, 1.0f, 0};
    su_qparams(dt, lo, hi, &o.scale, &o.zero_point);
    return o;
}

/* Dequantize v to f32 and mark the result as the graph output. */
static inline void su_qoutput(par_case *c, int32_t v)
{
    par_out_spec o = {"y", PAR_DTYPE_F32, 0.0f, 0};
    par_case_output(c, par_case_node(c, "dequantize", 1, &v, 0, NULL, &o));
}

/* The graph of a one-input op with attributes at: quantized when dt is qu8/qs8 (input "x" and output "y_q" both over
 * [-1, 1], then the dequantized output "y"), else f32 (input "x" filled by gen, output "y"). */
static inline void su_unary_graph(par_case *c, const char *op, par_dtype dt, int rank, const int64_t *dims,
                                  par_gen gen, int32_t na, const par_attr *at)
{
    if (dt) {
        int32_t x = su_qinput(c, "x", dt, rank, dims, -1.0, 1.0);
        par_out_spec o = su_qout_spec("y_q", dt, -1.0, 1.0);
        su_qoutput(c, par_case_node(c, op, 1, &x, na, at, &o));
    } else {
        int32_t x = par_case_input(c, "x", PAR_DTYPE_F32, rank, dims, gen);
        par_out_spec o = {"y", 0, 0.0f, 0};
        par_case_output(c, par_case_node(c, op, 1, &x, na, at, &o));
    }
}

/* ---- quantized sweeps: per-channel weights ---------------------------------------------------------------- */

/* Per-channel scales of a qs8 weight constant along `axis` (n channels): base * (0.5, 0.75, 1, 1.25, 0.5, ...), so
 * that neighbouring channels requantize with different ratios. A failure becomes the case's sticky error. */
static inline void su_channel_quant(par_case *c, int32_t value, int32_t axis, int64_t n, float base)
{
    if (c->status != PAR_OK || value < 0) return;
    float *sc = malloc(sizeof *sc * (size_t)(n > 0 ? n : 1));
    if (!sc) {
        c->status = par_msgf(&c->err, PAR_ERROR, "out of memory");
        return;
    }
    for (int64_t k = 0; k < n; k++) sc[k] = base * (float)(0.5 + 0.25 * (double)(k % 4));
    if (par_graph_set_channel_quant(c->graph, value, axis, sc, n, &c->err) != PAR_OK) c->status = PAR_ERROR;
    free(sc);
}

/* The weights and bias of a quantized conv2d / conv_transpose2d / linear: in[1] the integers wz +- 100 of dtype dt
 * and scale ws, or, per channel (pc), qs8 with zero point 0 and the scales of su_channel_quant along axis
 * (n channels); with bias, in[2] an i32 bias of scale xs ws whose real range is +-0.1. */
static inline void su_qweights(par_case *c, par_dtype dt, int pc, int32_t axis, int64_t n, int32_t rank,
                               const int64_t *wd, float ws, int32_t wz, float xs, int bias, const int64_t *bd,
                               int32_t *in)
{
    in[1] = par_case_const(c, "w", pc ? PAR_DTYPE_QS8 : dt, rank, wd,
                           (par_gen){.dist = PAR_DIST_UNIFORM, .a = wz - 100, .b = wz + 100});
    if (pc)
        su_channel_quant(c, in[1], axis, n, ws);
    else
        par_case_quant(c, in[1], ws, wz);
    if (bias) {
        double bq = 0.1 / ((double)xs * (double)ws);
        in[2] = par_case_const(c, "b", PAR_DTYPE_I32, 1, bd, (par_gen){.dist = PAR_DIST_UNIFORM, .a = -bq, .b = bq});
        par_case_quant(c, in[2], xs * ws, 0);
    }
}

/* The hazard cases of every op family (hazard.c), walked once per suite by the binary ops' spec. */
void par_sweep_hazard(par_sweep *s);

#endif
