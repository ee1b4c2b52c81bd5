/*
 * onnx_map_quant.c - the ONNX importer's QuantizeLinear and DequantizeLinear. A DequantizeLinear gives its input its
 * quantization (a graph input or constant: qu8 / qs8, per tensor or per axis; an int32 constant: an i32 bias) and
 * leaves its output pending, made only when a float consumer needs it; a QDQ-fused consumer reads the quantized
 * value itself (ox_qdq_try in onnx_ops.c).
 *
 * Must not: walk a graph or call the table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/onnx_int.h"

static int qparams(ox_imp *im, int32_t si, int32_t zi, float *scale, int32_t *zp, int32_t *zdt, int per_axis_ok,
                   ox_val **scales_out)
{
    ox_val *s = ox_in(im, si), *z = ox_in(im, zi);
    double sv;
    *zdt = z ? z->dtype : PAR_ONNX_UINT8;
    *zp = 0;
    if (!s) return ox_unsupported(im, "no scale");
    if (s->numel != 1) {
        if (per_axis_ok && s->is_const && s->floats) {
            *scales_out = s;
            if (z && z->is_const && z->ints)
                for (int64_t i = 0; i < z->numel; i++)
                    if (z->ints[i] != 0) return ox_unsupported(im, "per-axis zero points other than 0");
            return OX_OK;
        }
        return ox_unsupported(im, "per-axis quantization here");
    }
    if (ox_const_floats(im, s, &sv, 1) != 1) return OX_UNSUPPORTED;
    *scale = (float)sv;
    if (z) {
        int64_t zv;
        if (ox_const_ints(im, z, &zv, 1) != 1) return OX_UNSUPPORTED;
        *zp = (int32_t)zv;
    }
    if (*zdt != PAR_ONNX_UINT8 && *zdt != PAR_ONNX_INT8) return ox_unsupported(im, "%s quantization",
                                                                             par_onnx_dtype_name(*zdt));
    return OX_OK;
}

int ox_map_quantize(ox_imp *im)
{
    float scale;
    int32_t zp, zdt;
    ox_val *scales = NULL;
    int rc = qparams(im, 1, 2, &scale, &zp, &zdt, 0, &scales);
    if (rc != OX_OK) return rc;
    if (ox_attr(im, "axis") && ox_in(im, 1)->numel != 1) return ox_unsupported(im, "per-axis output quantization");
    int32_t x = ox_tensor(im, ox_in(im, 0));
    if (x < 0) return OX_UNSUPPORTED;
    par_out_spec s = {.dtype = zdt == PAR_ONNX_INT8 ? PAR_DTYPE_QS8 : PAR_DTYPE_QU8, .scale = scale, .zero_point = zp};
    return ox_emit(im, "quantize", 1, &x, 0, NULL, 0, &s) < 0 ? OX_UNSUPPORTED : OX_OK;
}

/* DequantizeLinear: its output is made only when a float consumer needs it (ox_tensor); a consumer fused with it
 * (ox_qdq_try) reads the quantized value itself. The quantized value takes the parameters here: a graph input or a
 * constant (8-bit, or an int32 bias with zero point 0) gets them; a value quantized before must agree. */
int ox_map_dequantize(ox_imp *im)
{
    ox_val *xv = ox_in(im, 0);
    if (!xv) return ox_unsupported(im, "no input");
    float scale = 1;
    int32_t zp = 0, zdt;
    ox_val *scales = NULL;
    if (xv->is_const && xv->dtype == PAR_ONNX_INT32 && xv->v < 0) {
        ox_val *s = ox_in(im, 1), *z = ox_in(im, 2);
        if (!s || !s->is_const || !s->floats) return ox_unsupported(im, "a run-time scale");
        if (z && z->is_const && z->ints)
            for (int64_t i = 0; i < z->numel; i++)
                if (z->ints[i]) return ox_unsupported(im, "an int32 zero point other than 0");
        if (s->numel == 1) {
            xv->scale = s->floats[0];
        } else {
            int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 1), xv->rank);
            if (axis < 0 || axis >= xv->rank || s->numel != xv->dims[axis])
                return ox_unsupported(im, "per-axis scales that do not match the axis");
            free(xv->q_scales);
            xv->q_axis = axis;
            xv->q_scales = malloc(sizeof(float) * (size_t)s->numel);
            if (!xv->q_scales) return ox_error(im, "out of memory");
            memcpy(xv->q_scales, s->floats, sizeof(float) * (size_t)s->numel);
            xv->scale = s->floats[0];
        }
    } else {
        int rc = qparams(im, 1, 2, &scale, &zp, &zdt, xv->is_const && xv->dtype == PAR_ONNX_INT8, &scales);
        if (rc != OX_OK) return rc;
        if (xv->dtype != PAR_ONNX_UINT8 && xv->dtype != PAR_ONNX_INT8)
            return ox_unsupported(im, "dequantizing %s (parity: 8-bit, and int32 biases)",
                                  par_onnx_dtype_name(xv->dtype));
        if (xv->v < 0 && (!xv->is_const || xv->from_data)) {
            if (ox_quant_input(im, xv, scale, zp) < 0) return OX_UNSUPPORTED;
        } else if (xv->v < 0) {
            xv->quantized = 1;
            if (scales) {
                int32_t axis = ox_norm_axis(ox_attr_i(im, "axis", 1), xv->rank);
                if (axis < 0 || axis >= xv->rank || scales->numel != xv->dims[axis])
                    return ox_unsupported(im, "per-axis scales that do not match the axis");
                free(xv->q_scales);
                xv->q_axis = axis;
                xv->q_scales = malloc(sizeof(float) * (size_t)scales->numel);
                if (!xv->q_scales) return ox_error(im, "out of memory");
                memcpy(xv->q_scales, scales->floats, sizeof(float) * (size_t)scales->numel);
            } else {
                xv->scale = scale;
                xv->zero_point = zp;
            }
        } else {
            const par_value *pv = ox_pv(im, xv->v);
            if (scales || pv->scale != scale || pv->zero_point != zp)
                return ox_unsupported(im, "a tensor dequantized with other parameters than it was quantized with");
        }
    }
    ox_val *y = ox_out(im, 0);
    if (!y) return OX_OK;
    y->dq_of = xv->name;
    y->dtype = PAR_ONNX_FLOAT;
    y->rank = xv->rank;
    memcpy(y->dims, xv->dims, sizeof y->dims);
    y->numel = xv->numel;
    return OX_OK;
}
