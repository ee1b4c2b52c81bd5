/*
 * tensor.h - element conversions between the graph's dtypes and float64, f16 <-> f32 conversions, and ULP distance.
 * Conversions are exact where the target can represent the value; rounding is IEEE round-to-nearest-even.
 */
#ifndef PAR_TENSOR_H
#define PAR_TENSOR_H

#include "parity_backend.h"

float par_f16_to_f32(uint16_t h);
uint16_t par_f32_to_f16(float f); /* round to nearest even, overflow to inf, NaN kept */
/* f rounded to the nearest bfloat16 (8 significant bits, f32's exponent range), ties to even, as an f32 (exact);
 * overflow to inf, NaN kept. */
float par_f32_round_bf16(float f);

/* Element i of a buffer of dtype dt, as a double: the stored number (the integer q for qu8/qs8/i32, not the real). */
double par_elem_get(par_dtype dt, const void *buf, int64_t i);
/* Store v into element i, rounding to nearest even and saturating for integer dtypes. */
void par_elem_set(par_dtype dt, void *buf, int64_t i, double v);

/* Distance in units in the last place between two f32 numbers (0 when equal; large for different signs). */
double par_ulp_distance_f32(float a, float b);

#endif
