/*
 * vk_test_replay.h - the replay graph of the vulkan tests, shared by test_vulkan.c and test_vulkan_precision.c:
 * y = relu(x) + c, x [1, 5, 2, 3] (NC4HW4 inside, a padded second channel block), c [5, 1, 1] a constant broadcast
 * over H and W. vk_replay_run prepares and binds it, then runs it twice with different inputs (small integers and
 * quarters: exact in every precision mode), asserting every element each time: the replayed command buffer must see
 * the new input. Included after tmain.h (CUnit), in tests only.
 */
#ifndef VK_TEST_REPLAY_H
#define VK_TEST_REPLAY_H

#include <math.h>

#include "core/parity_backend.h"

static const float vk_replay_c[5] = {0.5f, -1.0f, 2.0f, 0.25f, -3.0f};
static const int32_t vk_replay_in0[1] = {0}, vk_replay_out0[1] = {1}, vk_replay_in1[2] = {1, 2},
                     vk_replay_out1[1] = {3}, vk_replay_gin[1] = {0}, vk_replay_gout[1] = {3};

typedef struct vk_replay {
    par_value v[4];
    par_node nodes[2];
    par_graph_desc g;
    const void *ins[1]; /* bind keeps these arrays: they must live as long as the prepared graph */
    void *outs[1];
} vk_replay;

/* Prepares, binds and runs the graph twice on (x, y), 30 floats each; returns the prepared graph for the caller to run
 * again and release, or NULL after a failed assertion. r must outlive the prepared graph. */
static void *vk_replay_run(const par_backend *be, void *ctx, vk_replay *r, float *x, float *y, par_msg *m)
{
    const par_value x_ = {.name = "x", .dtype = PAR_DTYPE_F32, .rank = 4, .dims = {1, 5, 2, 3}, .numel = 30,
                          .kind = PAR_VALUE_INPUT, .producer = -1, .quant_axis = -1};
    r->v[0] = x_;
    r->v[1] = x_, r->v[1].name = "r", r->v[1].kind = PAR_VALUE_NODE, r->v[1].producer = 0;
    r->v[2] = (par_value){.name = "c", .dtype = PAR_DTYPE_F32, .rank = 3, .dims = {5, 1, 1}, .numel = 5,
                          .kind = PAR_VALUE_CONST, .producer = -1, .data = vk_replay_c, .quant_axis = -1};
    r->v[3] = x_, r->v[3].name = "y", r->v[3].kind = PAR_VALUE_NODE, r->v[3].producer = 1;
    r->nodes[0] = (par_node){.name = "relu0", .op = "relu", .n_inputs = 1, .inputs = vk_replay_in0, .n_outputs = 1,
                             .outputs = vk_replay_out0};
    r->nodes[1] = (par_node){.name = "add0", .op = "add", .n_inputs = 2, .inputs = vk_replay_in1, .n_outputs = 1,
                             .outputs = vk_replay_out1};
    r->g = (par_graph_desc){.name = "replay", .n_values = 4, .values = r->v, .n_nodes = 2, .nodes = r->nodes,
                            .n_inputs = 1, .inputs = vk_replay_gin, .n_outputs = 1, .outputs = vk_replay_gout};
    CU_ASSERT_EQUAL(be->supports(ctx, &r->g, 0, m), PAR_OK);
    CU_ASSERT_EQUAL(be->supports(ctx, &r->g, 1, m), PAR_OK);
    void *prep = NULL;
    if (be->prepare(ctx, &r->g, &prep, m) != PAR_OK) {
        CU_FAIL("prepare of the replay graph failed");
        return NULL;
    }
    r->ins[0] = x;
    r->outs[0] = y;
    CU_ASSERT_EQUAL(be->bind(ctx, prep, r->ins, r->outs, m), PAR_OK);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 30; i++) x[i] = (float)((i * 7 + round * 5) % 11) - 5.0f; /* integers in [-5, 5] */
        for (int i = 0; i < 30; i++) y[i] = NAN;
        CU_ASSERT_EQUAL(be->run(ctx, prep, m), PAR_OK);
        int bad = 0;
        for (int i = 0; i < 30; i++) {
            float want = (x[i] > 0 ? x[i] : 0.0f) + vk_replay_c[i / 6]; /* exact: small integers and quarters */
            bad += y[i] != want;
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
    return prep;
}

#endif /* VK_TEST_REPLAY_H */
