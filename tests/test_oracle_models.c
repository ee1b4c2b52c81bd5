/*
 * test_oracle_models.c - the oracle on whole models: budgets stay meaningful through deep graphs, so that the bugs a
 * backend can make in one layer of a model are caught at its outputs. The "backend" is the reference itself run on
 * a mutated copy of the model (a bias element dropped, two output channels of a weight swapped: a layout bug),
 * rounded to f32; the unmutated run, rounded to f32, must pass with a tiny ratio.
 */
#include <math.h>
#include <stdlib.h>

#include "core/case.h"
#include "core/requant.h"
#include "oracle/oracle.h"
#include "tmain.h"

typedef struct model_run {
    par_case *c;
    void **inputs;
    par_ref_result *ref;
} model_run;

static int strict_mode; /* par_prec.requant_exact for the runs of the current model */

/* The reference of the model as it stands (its constants may have been mutated in place). */
static int run(model_run *m)
{
    par_msg msg = {{0}};
    par_prec p = par_prec_for(PAR_ARITH_F32);
    p.requant_exact = strict_mode;
    par_ref_result_destroy(m->ref);
    m->ref = NULL;
    if (par_ref_run(par_graph_desc_of(m->c->graph), &p, (const void *const *)m->inputs, &m->ref, &msg) != PAR_OK) {
        fprintf(stderr, "\n    %s\n", msg.text);
        return -1;
    }
    return 0;
}

/* The model and its inputs, without running it. */
static int load(model_run *m, const char *path)
{
    par_msg msg = {{0}};
    memset(m, 0, sizeof *m);
    m->c = par_case_load(path, &msg);
    if (!m->c || par_case_make_inputs(m->c, &m->inputs, &msg) != PAR_OK) {
        fprintf(stderr, "\n    %s\n", msg.text);
        return -1;
    }
    return 0;
}

static void unload(model_run *m)
{
    par_ref_result_destroy(m->ref);
    if (m->inputs) par_case_free_inputs(m->c, m->inputs);
    par_case_destroy(m->c);
}

/* Graph output k of a run, rounded to f32 as a backend would store it. */
static float *as_f32(const model_run *m, int32_t k)
{
    const par_graph_desc *g = par_graph_desc_of(m->c->graph);
    const par_rt *t = &m->ref->values[g->outputs[k]];
    float *y = malloc(sizeof(float) * (size_t)t->numel);
    for (int64_t i = 0; i < t->numel; i++) y[i] = (float)t->v[i];
    return y;
}

/* A constant of the model, mutable (the test mutates the model's constants in place), with its element size. */
static unsigned char *value_data(model_run *m, const char *name, int64_t *numel, size_t *esize)
{
    int32_t v = par_graph_find_value(m->c->graph, name);
    CU_ASSERT_FATAL(v >= 0);
    const par_value *val = &par_graph_desc_of(m->c->graph)->values[v];
    *numel = val->numel;
    *esize = par_dtype_size(val->dtype);
    return (unsigned char *)val->data;
}

/* Judge the mutated model's outputs against the correct model's reference: the failing elements of every graph
 * output, and the largest error/budget among them. */
static double judge(const model_run *good, const model_run *bad, int64_t *n_fail)
{
    const par_graph_desc *g = par_graph_desc_of(good->c->graph);
    double worst = 0.0;
    *n_fail = 0;
    for (int32_t k = 0; k < g->n_outputs; k++) {
        float *y = as_f32(bad, k);
        par_metrics mt;
        *n_fail += par_oracle_compare(&good->ref->values[g->outputs[k]], y, &mt);
        free(y);
        if (mt.max_ratio > worst) worst = mt.max_ratio;
    }
    return worst;
}

/* max_correct: the error/budget the correct result may reach once rounded to f32. Float models: far under 1 (the
 * budgets cover a whole backend's rounding, the f32 rounding of the exact result is a tiny part of it). Quantized
 * models end in dequantize, an exact integer times a scale with budget 2u|y|, so rounding the exact result to f32
 * alone reaches up to 1/2 there. The mutations are made in turn on one second copy of the model, each undone before
 * the next, so the model is read twice and run three times. */
static void check_model(const char *path, const char *bias, int64_t bias_at, const char *weight, int64_t rows,
                        double max_correct)
{
    model_run good, bad;
    CU_ASSERT_FATAL(load(&good, path) == 0 && run(&good) == 0);
    /* the correct result, rounded to f32, passes far under the budget */
    int64_t nf;
    double r = judge(&good, &good, &nf);
    CU_ASSERT_EQUAL(nf, 0);
    CU_ASSERT(r <= max_correct);
    /* bias dropped on one channel */
    CU_ASSERT_FATAL(load(&bad, path) == 0);
    int64_t n;
    size_t es;
    unsigned char *b = value_data(&bad, bias, &n, &es);
    CU_ASSERT_FATAL(bias_at < n);
    unsigned char saved[16];
    CU_ASSERT_FATAL(es <= sizeof saved);
    memcpy(saved, b + (size_t)bias_at * es, es);
    memset(b + (size_t)bias_at * es, 0, es);
    CU_ASSERT_FATAL(run(&bad) == 0);
    double rb = judge(&good, &bad, &nf);
    PAR_TEST_NOTE("\n    %s: correct %.2g x budget; '%s'[%lld] dropped: %lld failing, %.3g x budget", path, r,
            bias, (long long)bias_at, (long long)nf, rb);
    CU_ASSERT(nf > 0);
    memcpy(b + (size_t)bias_at * es, saved, es);
    /* two output channels of a weight swapped (a layout bug) */
    unsigned char *w = value_data(&bad, weight, &n, &es);
    size_t row = (size_t)(n / rows) * es;
    for (size_t i = 0; i < row; i++) {
        unsigned char t = w[i];
        w[i] = w[row + i];
        w[row + i] = t;
    }
    CU_ASSERT_FATAL(run(&bad) == 0);
    double rw = judge(&good, &bad, &nf);
    PAR_TEST_NOTE("; '%s' channels 0/1 swapped: %lld failing, %.3g x budget ", weight, (long long)nf, rw);
    CU_ASSERT(nf > 0);
    unload(&bad);
    unload(&good);
}

static void test_mlp(void) { check_model("cases/models/mlp.json", "fc1_b", 7, "fc2_w", 256, 0.01); }

static void test_mobilenet_v2(void)
{
    PAR_TEST_NIGHTLY(); /* tens of seconds of CPU; the transformer encoder below checks the same through 2 layers */
    /* an early layer (the stem's batch norm shift) and a late one (the last project conv) */
    check_model("cases/models/mobilenet_v2.json", "features0_bn_bias", 3, "features17_project_w", 320, 0.01);
}

/* The quantized twin (qs8, per-channel weights, batch norm folded), judged in strict mode (a backend that promises
 * the fp32 scheme's integers exactly, PAR_PROC_REQUANT_EXACT): a dropped i32 bias element of the stem and two
 * swapped output channels of the last projection's qs8 weights must fail. (In the default mode they cannot: on this
 * randomly weighted network correct backends of the other schemes differ from the fp32 reference as much; see
 * docs/quantization.md.) */
static void test_mobilenet_v2_qs8_strict(void)
{
    PAR_TEST_NIGHTLY();
    strict_mode = 1;
    check_model("cases/models/mobilenet_v2_qs8.json", "features0_bias", 3, "features17_project_w", 320, 0.5);
    strict_mode = 0;
}

/* The transformer encoder: a masked attention softmax (-inf at the masked keys), layer norms and a gelu MLP. Its
 * budgets must stay finite through both layers (an exact -inf term once turned every budget of a masked row into
 * NaN, and the model passed anything): a value bias element of the first layer dropped, and two output rows of the
 * last feed-forward weight swapped, must fail at the output. */
static void test_transformer_encoder(void)
{
    check_model("cases/models/transformer_encoder.json", "layer0_v_b", 5, "layer1_ff2_w", 64, 0.01);
}

/* The Llama-style decoder's prefill: rms_norm, interleaved rope, causal grouped-query attention, a SwiGLU MLP and
 * logits. One element of the first block's attention norm weight zeroed, and two output rows of the last block's
 * down projection swapped, must fail at the logits. */
static void test_llama_decoder_prefill(void)
{
    check_model("cases/models/llama_decoder_prefill.json", "layer0_attn_norm_weight", 5, "layer1_w2_w", 64, 0.01);
}

/* The decode step: the KV caches written at the position and read through a -inf mask. The same two bugs. */
static void test_llama_decoder_decode(void)
{
    check_model("cases/models/llama_decoder_decode.json", "layer0_attn_norm_weight", 5, "layer1_w2_w", 64, 0.01);
}

/* The decoder's 8da4w twin, which no backend lowers yet. One element of the first block's attention norm weight
 * zeroed, and two output channels of its packed int4 key weights swapped, must fail at the first block's keys. Where
 * no activation of a row can cross a rounding boundary, the budget is the epilogue's, as for a quantized model, so
 * the correct result rounded to f32 may take up to 1/2 of it. */
static void test_llama_decoder_8da4w(void)
{
    check_model("cases/models/llama_decoder_prefill_8da4w.json", "layer0_attn_norm_weight", 5, "layer0_wk_w", 32, 0.5);
}

/* The node called name of a run's graph. */
static const par_node *node_named(const model_run *m, const char *name)
{
    const par_graph_desc *g = par_graph_desc_of(m->c->graph);
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i].name, name)) return &g->nodes[i];
    CU_FAIL_FATAL("no such node");
    return NULL;
}

/* The node's input 0 as a backend holds it: the reference's values rounded to f32. */
static float *input_f32(const model_run *m, const par_node *n, int64_t *numel)
{
    const par_rt *x = &m->ref->values[n->inputs[0]];
    float *xf = malloc(sizeof *xf * (size_t)x->numel);
    for (int64_t i = 0; i < x->numel; i++) xf[i] = (float)x->v[i];
    *numel = x->numel;
    return xf;
}

/* linear_8da4w computed as a backend would, from its input in the model (the reference's values in f32), with the
 * activations' quantization parameters per token (correct) or, per_tensor, once over the whole tensor (the bug). */
static float *run_8da4w(const model_run *m, const par_node *n, int per_tensor)
{
    const par_graph_desc *g = par_graph_desc_of(m->c->graph);
    const par_value *wv = &g->values[n->inputs[1]], *sv = &g->values[n->inputs[2]];
    const unsigned char *w = wv->data;
    const float *sw = sv->data;
    const int64_t oo = wv->dims[0], kk = 2 * wv->dims[1], blk = kk / sv->dims[1];
    int64_t numel;
    float *x = input_f32(m, n, &numel), inv, sx;
    const int64_t rows = numel / kk;
    float *y = malloc(sizeof *y * (size_t)(rows * oo));
    int32_t zp;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * kk;
        CU_ASSERT_FATAL(per_tensor ? par_requant_qd8_qparams(x, numel, &inv, &sx, &zp)
                                   : par_requant_qd8_qparams(xr, kk, &inv, &sx, &zp));
        for (int64_t o = 0; o < oo; o++) {
            double sum = 0;
            for (int64_t b = 0; b < kk / blk; b++) {
                int64_t acc = 0;
                for (int64_t k = b * blk; k < (b + 1) * blk; k++) {
                    const int byte = w[o * (kk / 2) + k / 2], nib = k % 2 ? byte >> 4 : byte & 15;
                    float q = rintf(xr[k] * inv) + (float)zp;
                    q = q < -128 ? -128 : q > 127 ? 127 : q;
                    acc += (int64_t)(q - (float)zp) * (nib >= 8 ? nib - 16 : nib);
                }
                sum += (double)acc * sw[o * (kk / blk) + b];
            }
            y[r * oo + o] = (float)((double)sx * sum);
        }
    }
    free(x);
    return y;
}

/* linear_dynamic computed as a backend would (PyTorch's ChooseQuantizationParams over the whole input, reduce_range
 * 0), or with the range taken from the first token only (the bug: a wrong row), from its input in the model. */
static float *run_linear_dynamic(const model_run *m, const par_node *n, int first_row_only)
{
    const par_graph_desc *g = par_graph_desc_of(m->c->graph);
    const par_value *wv = &g->values[n->inputs[1]], *bv = &g->values[n->inputs[2]];
    const int8_t *w = wv->data;
    const float *bias = bv->data;
    const int64_t oo = wv->dims[0], kk = wv->dims[1];
    int64_t numel;
    float *x = input_f32(m, n, &numel), mn = 0, mx = 0, sx;
    const int64_t rows = numel / kk;
    for (int64_t i = 0; i < (first_row_only ? kk : numel); i++) {
        mn = x[i] < mn ? x[i] : mn;
        mx = x[i] > mx ? x[i] : mx;
    }
    int32_t zx;
    par_requant_dynamic_qparams(mn, mx, 0, &sx, &zx, NULL, NULL);
    float *y = malloc(sizeof *y * (size_t)(rows * oo));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < oo; o++) {
            int64_t acc = 0;
            for (int64_t k = 0; k < kk; k++) {
                float q = nearbyintf(x[r * kk + k] / sx) + (float)zx;
                q = q < 0 ? 0 : q > 255 ? 255 : q;
                acc += (int64_t)(q - (float)zx) * w[o * kk + k];
            }
            const float sw = wv->quant_axis == 0 ? wv->channel_scales[o] : wv->scale;
            y[r * oo + o] = (float)acc * (sx * sw) + bias[o];
        }
    free(x);
    return y;
}

/* A dynamic quantization with the wrong parameters, deep in a whole model, fails the budget that the model's
 * earlier layers propagate to that node, while the same layer computed with the right ones passes: the budgets of
 * a quantized linear whose input carries budgets (reference/dynq.h) stay tight enough to see the scale. */
static void check_dynamic_scale(const char *path, const char *node, float *(*layer)(const model_run *, const par_node *,
                                                                                      int))
{
    model_run m;
    CU_ASSERT_FATAL(load(&m, path) == 0 && run(&m) == 0);
    const par_node *n = node_named(&m, node);
    const par_rt *ref = &m.ref->values[n->outputs[0]];
    double in_e = 0;
    for (int64_t i = 0; i < m.ref->values[n->inputs[0]].numel; i++)
        in_e = fmax(in_e, m.ref->values[n->inputs[0]].e[i]);
    CU_ASSERT(in_e > 0); /* the input carries budgets from the layers before */
    par_metrics good, bad;
    float *y = layer(&m, n, 0);
    const int64_t nf_good = par_oracle_compare(ref, y, &good);
    free(y);
    y = layer(&m, n, 1);
    const int64_t nf_bad = par_oracle_compare(ref, y, &bad);
    free(y);
    PAR_TEST_NOTE("\n    %s '%s' (input budgets up to %.3g): right parameters %.3g x budget, wrong %lld of %lld failing, "
                  "%.3g x budget", path, node, in_e, good.max_ratio, (long long)nf_bad, (long long)ref->numel,
                  bad.max_ratio);
    CU_ASSERT_EQUAL(nf_good, 0);
    CU_ASSERT(good.max_ratio <= 1);
    CU_ASSERT(nf_bad > 0);
    unload(&m);
}

static void test_8da4w_per_tensor_scale(void)
{
    check_dynamic_scale("cases/models/llama_decoder_prefill_8da4w.json", "layer0_w2", run_8da4w);
    check_dynamic_scale("cases/models/llama_decoder_prefill_8da4w.json", "layer1_wq", run_8da4w);
}

static void test_linear_dynamic_wrong_row_scale(void)
{
    check_dynamic_scale("cases/models/transformer_encoder_dynq.json", "layer0_ff2", run_linear_dynamic);
    check_dynamic_scale("cases/models/transformer_encoder_dynq.json", "layer1_q", run_linear_dynamic);
}

/* The speech encoder: a conv front end (a bias element of the first conv dropped) and two pre-norm blocks (two output
 * rows of the last MLP projection swapped). The dropped bias is caught at the first block's output (the second graph
 * output): at the final layer_norm it is under the budget, which the second block's attention widens about 17 times
 * (docs/suites.md). */
static void test_speech_encoder(void)
{
    check_model("cases/models/speech_encoder.json", "conv1_b", 5, "block1_mlp2_w", 64, 0.01);
}

static const CU_TestInfo tests[] = {
    {"mlp: one-layer bugs caught at the output", test_mlp},
    {"mobilenet_v2: one-layer bugs caught at the output", test_mobilenet_v2},
    {"mobilenet_v2_qs8, strict mode: one-layer bugs caught at the output", test_mobilenet_v2_qs8_strict},
    {"transformer_encoder: one-layer bugs caught at the output", test_transformer_encoder},
    {"llama_decoder_prefill: one-layer bugs caught at the logits", test_llama_decoder_prefill},
    {"llama_decoder_decode: one-layer bugs caught at the logits", test_llama_decoder_decode},
    {"llama_decoder_prefill_8da4w: first-block bugs caught at its keys", test_llama_decoder_8da4w},
    {"llama_decoder_prefill_8da4w: activations quantized per tensor fail deep in the model", test_8da4w_per_tensor_scale},
    {"transformer_encoder_dynq: the range of one token only fails deep in the model",
     test_linear_dynamic_wrong_row_scale},
    {"speech_encoder: one-layer bugs caught at the output", test_speech_encoder},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("oracle_models", tests)
