/*
 * conv.c - convolution (NHWC, any groups, stride, dilation, padding) for the cpu backend. Three paths, chosen at
 * create time: depthwise (groups == in_c > 1) goes to dwconv.c; a 1x1, stride 1, unpadded convolution is a GEMM over
 * the batch*H*W pixels straight from the input (no indirection, lda = in_c); everything else runs the igemm
 * micro-kernel through an indirection buffer: for each output pixel, kh*kw pointers to its input pixels (the zero
 * row for padding taps), laid out per tile of MR pixels as [ks][MR] so the kernel reads them in order; the group's
 * first channel is added by the kernel (a_offset). No im2col copy is made.
 * Every output element is bias + sum over (kh, kw, c) in that order, one FMA (SIMD) or multiply-add (scalar) per
 * term: the error bound is gamma_K * sum|w x| with K = kh*kw*in_c/groups, independent of tiles and threads.
 * Must not read input outside the bound tensor: every tap is bounds-checked when the indirection is built; the zero
 * row holds in_c/groups floats, all a kernel reads from it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_kernels.h"
#include "cpu_ukernels.h"

typedef enum conv_mode { MODE_DW, MODE_GEMM, MODE_IGEMM } conv_mode;

struct cpu_conv {
    cpu_conv_params p;
    conv_mode mode;
    cpu_dwconv *dw;
    const cpu_ukernel_set *uk;
    size_t cin_g, cout_g, ks, m, mtiles, nc_block, group_stride;
    cpu_minmax mm;
    float *packed; /* groups x group_stride floats */
    float *zero;
    const float **ind;
    const float *x;
    float *y;
    size_t m_base; /* cpu_conv_run_rows: the first output pixel of the range being run */
};

static int check_params(const cpu_conv_params *p, const float *w, char *err, size_t err_len)
{
    static const char *const names[] = {"batch", "in_h", "in_w", "in_c", "out_h", "out_w", "out_c", "kh", "kw",
                                        "sh", "sw", "dh", "dw", "groups"};
    const int64_t vals[] = {p->batch, p->in_h, p->in_w, p->in_c, p->out_h, p->out_w, p->out_c,
                            p->kh, p->kw, p->sh, p->sw, p->dh, p->dw, p->groups};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (vals[i] < 1) {
            snprintf(err, err_len, "convolution: %s = %lld must be >= 1", names[i], (long long)vals[i]);
            return -1;
        }
    if (p->pad_top < 0 || p->pad_left < 0) {
        snprintf(err, err_len, "convolution: padding (%lld, %lld) must be >= 0", (long long)p->pad_top,
                 (long long)p->pad_left);
        return -1;
    }
    if (p->in_c % p->groups || p->out_c % p->groups) {
        snprintf(err, err_len, "convolution: groups %lld must divide in_c %lld and out_c %lld", (long long)p->groups,
                 (long long)p->in_c, (long long)p->out_c);
        return -1;
    }
    if (!(p->out_min <= p->out_max)) {
        snprintf(err, err_len, "convolution: clamp min %g > max %g", (double)p->out_min, (double)p->out_max);
        return -1;
    }
    if (!w) {
        snprintf(err, err_len, "convolution: weights are NULL");
        return -1;
    }
    return 0;
}

static int is_depthwise(const cpu_conv_params *p)
{
    return p->groups == p->in_c && p->groups > 1;
}

/* A 1x1, stride 1, unpadded convolution: a GEMM straight on the input pixels. */
static int is_pointwise(const cpu_conv_params *p)
{
    return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pad_top == 0 && p->pad_left == 0 &&
           p->out_h == p->in_h && p->out_w == p->in_w;
}

int cpu_conv_runs_by_rows(const cpu_conv_params *p)
{
    return p && (is_depthwise(p) || is_pointwise(p));
}

cpu_conv *cpu_conv_create(const cpu_conv_params *p, const float *w, const float *bias, cpu_isa isa, char *err,
                          size_t err_len)
{
    if (!p) {
        snprintf(err, err_len, "convolution: parameters are NULL");
        return NULL;
    }
    if (check_params(p, w, err, err_len)) return NULL;
    cpu_conv *c = calloc(1, sizeof *c);
    if (!c) goto oom;
    c->p = *p;
    c->uk = cpu_ukernels_for(isa);
    c->mm.min = p->out_min;
    c->mm.max = p->out_max;
    if (is_depthwise(p)) {
        c->mode = MODE_DW;
        c->dw = cpu_dwconv_create(p, w, bias, isa, err, err_len);
        if (!c->dw) {
            free(c);
            return NULL;
        }
        return c;
    }
    c->cin_g = (size_t)(p->in_c / p->groups);
    c->cout_g = (size_t)(p->out_c / p->groups);
    c->ks = (size_t)(p->kh * p->kw);
    c->m = (size_t)(p->batch * p->out_h * p->out_w);
    c->mtiles = (c->m + c->uk->mr - 1) / c->uk->mr;
    c->mode = is_pointwise(p) ? MODE_GEMM : MODE_IGEMM;
    c->nc_block = cpu_gemm_nc_block(c->cout_g, c->ks * c->cin_g, c->uk->nr);
    c->group_stride = cpu_pack_conv_size(c->cout_g, c->ks, c->cin_g, c->uk->nr);
    c->packed = cpu_alloc_floats(c->group_stride * (size_t)p->groups);
    if (!c->packed) goto oom;
    for (size_t g = 0; g < (size_t)p->groups; g++)
        cpu_pack_conv_oihw(c->cout_g, c->cin_g, (size_t)p->kh, (size_t)p->kw, c->uk->nr,
                           w + g * c->cout_g * c->cin_g * c->ks, bias ? bias + g * c->cout_g : NULL,
                           c->packed + g * c->group_stride);
    if (c->mode == MODE_IGEMM) {
        c->zero = cpu_alloc_floats(c->cin_g);
        c->ind = malloc(c->mtiles * c->ks * c->uk->mr * sizeof *c->ind);
        if (!c->zero || !c->ind) goto oom;
        memset(c->zero, 0, c->cin_g * sizeof(float));
    }
    return c;
oom:
    cpu_conv_destroy(c);
    snprintf(err, err_len, "convolution: out of memory");
    return NULL;
}

int cpu_conv_setup(cpu_conv *c, const float *x, float *y, char *err, size_t err_len)
{
    if (!c || !x || !y) {
        snprintf(err, err_len, "convolution setup: %s is NULL", !c ? "the convolution" : !x ? "input" : "output");
        return -1;
    }
    if (c->mode == MODE_DW) return cpu_dwconv_setup(c->dw, x, y, err, err_len);
    c->x = x;
    c->y = y;
    if (c->mode == MODE_IGEMM) {
        /* Tile t, position s, row r -> ind[(t * ks + s) * MR + r]; rows past m repeat the last pixel. */
        const cpu_conv_params *p = &c->p;
        const size_t mr = c->uk->mr, ohw = (size_t)(p->out_h * p->out_w);
        for (size_t i = 0; i < c->mtiles * mr; i++) {
            const size_t pix = i < c->m ? i : c->m - 1;
            const int64_t n = (int64_t)(pix / ohw), oy = (int64_t)(pix % ohw) / p->out_w,
                          ox = (int64_t)(pix % ohw) % p->out_w;
            const float **row = c->ind + (i / mr) * c->ks * mr + i % mr;
            for (int64_t ky = 0; ky < p->kh; ky++)
                for (int64_t kx = 0; kx < p->kw; kx++) {
                    const int64_t iy = oy * p->sh - p->pad_top + ky * p->dh;
                    const int64_t ix = ox * p->sw - p->pad_left + kx * p->dw;
                    const int inside = iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w;
                    *row = inside ? x + ((n * p->in_h + iy) * p->in_w + ix) * p->in_c : c->zero;
                    row += mr;
                }
        }
    }
    return 0;
}

/* i: group, j: block of output channels within it, k: tile of output pixels. */
static void conv_tile(void *ctx, size_t g, size_t n0, size_t m0, size_t nb, size_t mb)
{
    const cpu_conv *c = ctx;
    m0 += c->m_base;
    const size_t oc = (size_t)c->p.out_c, kc = c->cin_g;
    const float *w = c->packed + g * c->group_stride + n0 * (c->ks * kc + 1);
    float *y = c->y + m0 * oc + g * c->cout_g + n0;
    if (c->mode == MODE_GEMM) {
        const size_t ic = (size_t)c->p.in_c;
        c->uk->gemm(mb, nb, kc, c->x + m0 * ic + g * kc, ic, w, y, oc, &c->mm);
    } else {
        const size_t mr = c->uk->mr;
        c->uk->igemm(mb, nb, kc, c->ks, c->ind + (m0 / mr) * c->ks * mr, w, y, oc, g * kc, c->zero, &c->mm);
    }
}

/* Output pixels [m0, m1): every output channel of each. */
static void conv_run_pixels(cpu_conv *c, size_t m0, size_t m1, pthreadpool_t pool)
{
    if (!c->y || m1 <= m0) return;
    size_t nb = c->nc_block;
    const size_t threads = pool ? pthreadpool_get_threads_count(pool) : 1;
    if (threads > 1) {
        /* Enough tiles for every thread when the pixels alone do not provide them. */
        const size_t groups = (size_t)c->p.groups, nr = c->uk->nr, mtiles = (m1 - m0 + c->uk->mr - 1) / c->uk->mr;
        while (nb > nr && groups * mtiles * ((c->cout_g + nb - 1) / nb) < 4 * threads)
            nb = (nb / 2 + nr - 1) / nr * nr;
    }
    c->m_base = m0;
    pthreadpool_parallelize_3d_tile_2d(pool, conv_tile, c, (size_t)c->p.groups, c->cout_g, m1 - m0, nb, c->uk->mr,
                                       0);
}

void cpu_conv_run(cpu_conv *c, pthreadpool_t pool)
{
    if (!c) return;
    if (c->mode == MODE_DW) {
        cpu_dwconv_run(c->dw, pool);
        return;
    }
    conv_run_pixels(c, 0, c->m, pool);
}

/* Output rows [r0, r1) (rows of all images, image-major) of a convolution that runs by rows. */
static void conv_run_rows(cpu_conv *c, size_t r0, size_t r1, pthreadpool_t pool)
{
    if (c->mode == MODE_DW) {
        cpu_dwconv_run_rows(c->dw, r0, r1, pool);
        return;
    }
    const size_t ow = (size_t)c->p.out_w;
    conv_run_pixels(c, r0 * ow, r1 * ow, pool);
}

/* How many input rows (image-major) must be complete before output rows [0, r) can be computed. */
static size_t rows_needed(const cpu_conv *c, size_t r)
{
    if (r == 0) return 0;
    const cpu_conv_params *p = &c->p;
    const int64_t n = (int64_t)(r - 1) / p->out_h, oy = (int64_t)(r - 1) % p->out_h;
    int64_t iy = oy * p->sh - p->pad_top + (p->kh - 1) * p->dh + 1; /* one past the lowest tap row */
    if (iy < 0) iy = 0;
    if (iy > p->in_h) iy = p->in_h;
    return (size_t)(n * p->in_h + iy);
}

static size_t conv_rows(const cpu_conv *c)
{
    return (size_t)(c->p.batch * c->p.out_h);
}

size_t cpu_conv_chain_band(cpu_conv *const *convs, size_t n, size_t band_bytes)
{
    if (!convs || n == 0) return 1;
    const size_t last = conv_rows(convs[n - 1]);
    size_t widest = 1; /* bytes of the intermediates per output row of the last convolution */
    for (size_t l = 0; l + 1 < n; l++) {
        const cpu_conv_params *p = &convs[l]->p;
        const size_t per = (size_t)(p->out_w * p->out_c) * sizeof(float) * (conv_rows(convs[l]) + last - 1) / last;
        if (per > widest) widest = per;
    }
    const size_t band = band_bytes / widest;
    return band < 1 ? 1 : band < last ? band : last;
}

void cpu_conv_chain_run(cpu_conv *const *convs, size_t n, size_t band, pthreadpool_t pool)
{
    enum { MAX_CHAIN = 8 };
    if (!convs || n == 0 || n > MAX_CHAIN) return;
    size_t done[MAX_CHAIN] = {0}, need[MAX_CHAIN];
    const size_t last = conv_rows(convs[n - 1]);
    if (band < 1) band = 1;
    for (size_t end = 0; end < last;) {
        end = end + band < last ? end + band : last;
        need[n - 1] = end;
        for (size_t l = n - 1; l > 0; l--) need[l - 1] = rows_needed(convs[l], need[l]);
        for (size_t l = 0; l < n; l++)
            if (need[l] > done[l]) {
                conv_run_rows(convs[l], done[l], need[l], pool);
                done[l] = need[l];
            }
    }
}

void cpu_conv_destroy(cpu_conv *c)
{
    if (!c) return;
    cpu_dwconv_destroy(c->dw);
    free(c->packed);
    free(c->zero);
    free(c->ind);
    free(c);
}
