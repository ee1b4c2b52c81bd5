/*
 * cpu_ukernels.h - the micro-kernels of the cpu backend (XNNPACK-style, one file per kernel spec) and the per-ISA
 * table that picks them. Internal to backends/cpu: the planner uses cpu_kernels.h only.
 *
 * Layouts (all in floats, never bytes):
 * - GEMM packed weights: for each panel of NR output columns, NR bias values then kc rows of NR weights; columns past
 *   n are zero. A micro-kernel call walks nc columns, one panel after the other, and writes an mr x nc block of C.
 * - IGEMM packed weights: per panel, NR bias values then ks * kc rows of NR weights (kernel position outer, input
 *   channel inner). The indirection block for one tile is ks groups of MR row pointers; a pointer equal to `zero`
 *   is used as is, any other gets a_offset added (the group's first input channel).
 * - DWCONV packed weights: per block of CB channels, CB bias values then taps rows of CB weights; channels past c are
 *   zero. The indirection is taps pointers per output pixel, each to channel 0 of an input pixel or to `zero`.
 * Remainders: rows past mr repeat the last valid row (reads and writes stay in bounds, the duplicate writes carry the
 * same values); columns and channels past the end are masked on load and store. No kernel reads past the end of an
 * activation row or writes outside its mr x nc block.
 * Clamp: y = min(max(acc, min), max) with NaN propagated (the operand order of max/min keeps a NaN accumulator).
 */
#ifndef CPU_UKERNELS_H
#define CPU_UKERNELS_H

#include <stddef.h>

#include "cpu_kernels.h"

typedef struct cpu_minmax {
    float min, max;
} cpu_minmax;

typedef void (*cpu_gemm_ukernel)(size_t mr, size_t nc, size_t kc, const float *a, size_t a_stride, const float *w,
                                 float *c, size_t cm_stride, const cpu_minmax *p);
typedef void (*cpu_igemm_ukernel)(size_t mr, size_t nc, size_t kc, size_t ks, const float **a, const float *w,
                                  float *c, size_t cm_stride, size_t a_offset, const float *zero, const cpu_minmax *p);
/* Depthwise: npix output pixels; input holds taps pointers per pixel; output advances by out_stride per pixel. */
typedef void (*cpu_dwconv_ukernel)(size_t channels, size_t npix, size_t taps, const float **input, const float *w,
                                   float *output, size_t out_stride, const float *zero, const cpu_minmax *p);
/* Depthwise 3x3, stride 1, dilation 1, multiplier 1, straight on NHWC (no indirection): one output row of out_w pixels from
 * the three input rows rows[0..2] (NULL: a padding row, read as zeros), each in_w pixels of `channels` floats;
 * output column ox reads input columns ox - pad_left + (0, 1, 2), those outside [0, in_w) read as zeros.
 * Weights in the DWCONV layout with 9 taps. */
typedef void (*cpu_dwconv3x3_ukernel)(size_t channels, size_t out_w, size_t in_w, size_t pad_left,
                                      const float *const *rows, const float *w, float *out, const cpu_minmax *p);

typedef struct cpu_ukernel_set {
    cpu_isa isa;
    size_t mr, nr;          /* GEMM / IGEMM tile */
    cpu_gemm_ukernel gemm;
    cpu_igemm_ukernel igemm;
    size_t dw_cb;           /* depthwise channel block */
    cpu_dwconv_ukernel dw9, dw25, dw_any;
    cpu_dwconv3x3_ukernel dw3x3; /* row kernel for 3x3 stride 1; NULL: the ISA has none */
} cpu_ukernel_set;

const cpu_ukernel_set *cpu_ukernels_for(cpu_isa isa);

/* Packing (pack.c). Sizes in floats; pack functions write the full padded panels. */
size_t cpu_pack_gemm_size(size_t n, size_t k, size_t nr);
/* w[n][k] with row stride ldw (linear layout), or, when transposed, b[k][n] with row stride ldw. */
void cpu_pack_gemm_nk(size_t n, size_t k, size_t nr, const float *w, size_t ldw, const float *bias, float *out);
void cpu_pack_gemm_kn(size_t n, size_t k, size_t nr, const float *b, size_t ldb, const float *bias, float *out);
/* Convolution weights of one group: w[o][c][kh][kw] for o in [0, n), c in [0, kc) (OIHW, group slice at w). */
size_t cpu_pack_conv_size(size_t n, size_t ks, size_t kc, size_t nr);
void cpu_pack_conv_oihw(size_t n, size_t kc, size_t kh, size_t kw, size_t nr, const float *w, const float *bias,
                        float *out);
/* Depthwise weights for multiplier 1: w[c][1][kh][kw]. */
size_t cpu_pack_dw_size(size_t c, size_t taps, size_t cb);
void cpu_pack_dw(size_t c, size_t taps, size_t cb, const float *w, const float *bias, float *out);

/* gemm.c: 64-byte aligned float buffers (free with free()), and the N block width that keeps packed panels in L2. */
float *cpu_alloc_floats(size_t count);
size_t cpu_gemm_nc_block(size_t n, size_t k, size_t nr);

/* dwconv.c: depthwise convolution (groups == in_c == in channels, any multiplier), used by conv.c. */
typedef struct cpu_dwconv cpu_dwconv;
cpu_dwconv *cpu_dwconv_create(const cpu_conv_params *p, const float *w, const float *bias, cpu_isa isa, char *err,
                              size_t err_len);
int cpu_dwconv_setup(cpu_dwconv *d, const float *x, float *y, char *err, size_t err_len);
void cpu_dwconv_run(cpu_dwconv *d, pthreadpool_t pool);
/* Output rows [row0, row1) only (rows of all images, image-major). */
void cpu_dwconv_run_rows(cpu_dwconv *d, size_t row0, size_t row1, pthreadpool_t pool);
void cpu_dwconv_destroy(cpu_dwconv *d);

/* The micro-kernels. */
void cpu_f32_gemm_7x32__avx512(size_t, size_t, size_t, const float *, size_t, const float *, float *, size_t,
                               const cpu_minmax *);
void cpu_f32_igemm_7x32__avx512(size_t, size_t, size_t, size_t, const float **, const float *, float *, size_t,
                                size_t, const float *, const cpu_minmax *);
void cpu_f32_gemm_6x16__avx2(size_t, size_t, size_t, const float *, size_t, const float *, float *, size_t,
                             const cpu_minmax *);
void cpu_f32_igemm_6x16__avx2(size_t, size_t, size_t, size_t, const float **, const float *, float *, size_t,
                              size_t, const float *, const cpu_minmax *);
void cpu_f32_gemm_6x8__neon(size_t, size_t, size_t, const float *, size_t, const float *, float *, size_t,
                            const cpu_minmax *);
void cpu_f32_igemm_6x8__neon(size_t, size_t, size_t, size_t, const float **, const float *, float *, size_t, size_t,
                             const float *, const cpu_minmax *);
void cpu_f32_gemm_4x4__scalar(size_t, size_t, size_t, const float *, size_t, const float *, float *, size_t,
                              const cpu_minmax *);
void cpu_f32_igemm_4x4__scalar(size_t, size_t, size_t, size_t, const float **, const float *, float *, size_t,
                               size_t, const float *, const cpu_minmax *);

#define CPU_DW_DECL(name)                                                                                          \
    void name(size_t, size_t, size_t, const float **, const float *, float *, size_t, const float *,                 \
              const cpu_minmax *)
void cpu_f32_dwconv_3x3s1__avx512(size_t, size_t, size_t, size_t, const float *const *, const float *, float *,
                                  const cpu_minmax *);
CPU_DW_DECL(cpu_f32_dwconv_9p__avx512);
CPU_DW_DECL(cpu_f32_dwconv_25p__avx512);
CPU_DW_DECL(cpu_f32_dwconv_up__avx512);
CPU_DW_DECL(cpu_f32_dwconv_9p__avx2);
CPU_DW_DECL(cpu_f32_dwconv_25p__avx2);
CPU_DW_DECL(cpu_f32_dwconv_up__avx2);
CPU_DW_DECL(cpu_f32_dwconv_9p__neon);
CPU_DW_DECL(cpu_f32_dwconv_25p__neon);
CPU_DW_DECL(cpu_f32_dwconv_up__neon);
CPU_DW_DECL(cpu_f32_dwconv_9p__scalar);
CPU_DW_DECL(cpu_f32_dwconv_25p__scalar);
CPU_DW_DECL(cpu_f32_dwconv_up__scalar);

#endif
