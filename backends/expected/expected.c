/*
 * expected.c - the `expected` backend's table (expected.h). Every case is supported; nothing is ever prepared or
 * run here: the runner recognises the table and takes the case's expected outputs instead (runner/judge.c). Its
 * arithmetic is f32, the precision the files' producers compute in (ONNX's node tests: numpy in float32).
 */
#include "expected.h"

static par_status ex_init(void **ctx, par_msg *msg)
{
    *ctx = NULL;
    return PAR_OK;
}

static void ex_destroy(void *ctx) {}

static par_status ex_supports(void *ctx, const par_graph_desc *g, int32_t node, par_msg *msg) { return PAR_OK; }

static par_status ex_prepare(void *ctx, const par_graph_desc *g, void **prepared, par_msg *msg)
{
    return par_msgf(msg, PAR_UNSUPPORTED, "the expected outputs are read from the case, not computed");
}

static par_status ex_bind(void *ctx, void *prepared, const void *const *in, void *const *out, par_msg *msg)
{
    return par_msgf(msg, PAR_ERROR, "not runnable");
}

static par_status ex_run(void *ctx, void *prepared, par_msg *msg) { return par_msgf(msg, PAR_ERROR, "not runnable"); }

static void ex_release(void *ctx, void *prepared) {}

static const par_backend table = {
    .api_version = PAR_BACKEND_API_VERSION,
    .struct_size = sizeof(par_backend),
    .name = "expected",
    .description = "the expected outputs a case's source carries (ONNX node tests), judged like a backend's",
    .version = "1",
    .arith = PAR_ARITH_F32,
    .init = ex_init,
    .destroy = ex_destroy,
    .supports = ex_supports,
    .prepare = ex_prepare,
    .bind = ex_bind,
    .run = ex_run,
    .release = ex_release,
};

const par_backend *par_backend_expected(void) { return &table; }
