/*
 * gen_ops.c - which constraint function builds each op, and the generic path for ops without one. The op's family
 * is recognised by its shape function (the op table's infer column), so every op of the table is covered and a new
 * op that reuses a shape function is fuzzed at once; an op with a new shape function falls back to the generic path
 * (inputs from the pool, attributes from its schema, checked by gen_emit and retried a bounded number of times)
 * until its family gets a constraint function: one line below. A family listed with no function would never be
 * drawn (gen_op_fn_of returns NULL); ops with quantized operands only are built between a quantize and a dequantize
 * (linear_16a4w).
 */
#include "gen/gen_int.h"

static const struct {
    par_infer_fn infer;
    gen_op_fn fn;
} families[] = {
    {par_infer_conv2d, gen_op_conv2d},
    {par_infer_conv_transpose2d, gen_op_conv_transpose2d},
    {par_infer_linear, gen_op_linear},
    {par_infer_linear_8da4w, gen_op_linear_8da4w},
    {par_infer_linear_qd8, gen_op_qd8},
    {par_infer_matmul_qd8, gen_op_qd8},
    {par_infer_linear_16a4w, gen_op_linear_16a4w}, /* between a quantize to qs16 and a dequantize */
    {par_infer_matmul, gen_op_matmul},
    {par_infer_broadcast, gen_op_binary},
    {par_infer_same, gen_op_unary},
    {par_infer_prelu, gen_op_prelu},
    {par_infer_max_pool2d, gen_op_pool},
    {par_infer_avg_pool2d, gen_op_pool},
    {par_infer_adaptive_avg_pool2d, gen_op_adaptive_pool},
    {par_infer_global_avg_pool2d, gen_op_adaptive_pool},
    {par_infer_mean, gen_op_reduce},
    {par_infer_upsample2d, gen_op_upsample},
    {par_infer_concat, gen_op_concat},
    {par_infer_reshape, gen_op_reshape},
    {par_infer_flatten, gen_op_flatten},
    {par_infer_permute, gen_op_permute},
    {par_infer_pad, gen_op_pad},
    {par_infer_slice, gen_op_slice},
    {par_infer_compare, gen_op_binary},
    {par_infer_logical, gen_op_logical},
    {par_infer_where, gen_op_where},
    {par_infer_masked_fill, gen_op_masked_fill},
    {par_infer_gather, gen_op_gather},
    {par_infer_embedding, gen_op_embedding},
    {par_infer_batch_norm, gen_op_norm},
    {par_infer_layer_norm, gen_op_norm},
    {par_infer_group_norm, gen_op_norm},
    {par_infer_instance_norm, gen_op_norm},
    {par_infer_rms_norm, gen_op_norm},
    {par_infer_rope, gen_op_rope},
    {par_infer_sdpa, gen_op_sdpa},
    {par_infer_slice_scatter, gen_op_slice_scatter},
    {par_infer_quantize, gen_op_quant},
    {par_infer_dequantize, gen_op_quant},
};

gen_op_fn gen_op_fn_of(const par_op_info *op)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (families[i].infer == op->infer) return families[i].fn;
    return gen_op_generic;
}

int32_t gen_op_generic(gen_ctx *g, const par_op_info *op, int32_t room)
{
    if (room < 1 || op->in_max > 8) return -1;
    for (int attempt = 0; attempt < 8; attempt++) {
        gen_in ins[8];
        int32_t n = (int32_t)gen_range(g->src, op->in_min, op->in_max < op->in_min + 2 ? op->in_max : op->in_min + 2);
        if (n < 1) n = op->in_min;
        for (int32_t i = 0; i < n; i++) ins[i] = gen_act(g, 1, GEN_RANK, 0);
        int32_t rank0 = 0;
        if (n > 0) gen_in_dims(g, &ins[0], &rank0);
        gen_attrs at;
        gen_attrs_schema(g, op, rank0, &at);
        int32_t v = gen_emit(g, op, n, ins, &at, 0, 0.0f, 0, 0, 8.0);
        if (v >= 0 || g->failed) return v;
    }
    return -1;
}
