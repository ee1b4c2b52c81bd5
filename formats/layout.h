/*
 * layout.h - moving tensor data between layouts, shared by the formats' importers and exporters: TFLite's NHWC and
 * OHWI against parity's NCHW and OIHW, a weight [K, N] written as [N, K].
 */
#ifndef PAR_FORMATS_LAYOUT_H
#define PAR_FORMATS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* Permute row-major data of r dims (elements of esz bytes): out.dims[j] = dims[p[j]]. r <= 8. */
void par_fmt_permute(const void *src, void *dst, size_t esz, int32_t r, const int64_t *dims, const int32_t *p);

#endif
