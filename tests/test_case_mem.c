/*
 * test_case_mem.c - the per-case memory estimate (runner/case_mem.c) on small graphs whose every term is computed
 * by hand in the comments, the limit's parsing and default, and the refusal reason's wording.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/case_mem.h"
#include "tmain.h"

/* x f32 [2,3] -> relu -> y (output) */
static par_graph *relu_graph(void)
{
    par_msg m;
    par_graph *g = par_graph_create("relu");
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 2, (int64_t[]){2, 3}, &m);
    par_out_spec o = {.name = "y"};
    CU_ASSERT_FATAL(par_graph_add_node(g, "relu", NULL, 1, &x, 0, NULL, &o, &m) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(g, par_graph_find_value(g, "y"), &m) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    return g;
}

static void test_float_graph(void)
{
    par_graph *g = relu_graph();
    const par_graph_desc *d = par_graph_desc_of(g);
    par_case_mem m;
    par_case_mem_parts(d, 1, NULL, &m);
    /* data: the input, 6 x 4 bytes = 24 */
    CU_ASSERT_EQUAL(m.data, 24);
    /* reference values: x and y, 6 elements x 24 bytes (v, e, s) each = 288 */
    CU_ASSERT_EQUAL(m.ref_values, 288);
    /* temporaries: relu's scale pass, a par_rt of its 6 outputs = 144 */
    CU_ASSERT_EQUAL(m.ref_temp, 144);
    CU_ASSERT_EQUAL(m.ref_kept, 0);
    /* buffers: header 2048; input copy: 24 aligned to 64, + 64 spare = 128; output: shared 64 + two 256-byte
     * guards, run-1 copy 24, the worker's copy 24 = 624; 2048 + 128 + 624 = 2800 */
    CU_ASSERT_EQUAL(m.buffers, 2800);
    CU_ASSERT_EQUAL(m.backend, 0);
    /* 24 + 288 + 0 + max(144, 2800 + 0) = 3112 */
    CU_ASSERT_EQUAL(m.total, 3112);
    CU_ASSERT_EQUAL(par_case_mem_estimate(d, 1), 3112);

    /* five backends on a float graph: at most 3 profiles (the arithmetic), 2 further references of 288 each */
    par_case_mem_parts(d, 5, NULL, &m);
    CU_ASSERT_EQUAL(m.ref_kept, 576);
    CU_ASSERT_EQUAL(m.total, 3112 + 576);
    /* kept through the cache: the output only, 6 x 24 = 144 each */
    par_case_mem_opts o = {.n_profiles = 3, .outputs_only = 1};
    par_case_mem_parts(d, 5, &o, &m);
    CU_ASSERT_EQUAL(m.ref_kept, 288);
    par_graph_destroy(g);
}

/* qu8 x, y [4,8] -> add -> z qu8 [4,8] -> dequantize -> f f32 [4,8] (output) */
static void test_quant_graph(void)
{
    par_msg m;
    par_graph *g = par_graph_create("q");
    int64_t dims[2] = {4, 8};
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_QU8, 2, dims, &m);
    int32_t y = par_graph_add_input(g, "y", PAR_DTYPE_QU8, 2, dims, &m);
    CU_ASSERT_FATAL(par_graph_set_quant(g, x, 0.05f, 128, &m) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_set_quant(g, y, 0.03f, 120, &m) == PAR_OK);
    par_out_spec oz = {.name = "z", .dtype = PAR_DTYPE_QU8, .scale = 0.07f, .zero_point = 125};
    CU_ASSERT_FATAL(par_graph_add_node(g, "add", NULL, 2, (int32_t[]){x, y}, 0, NULL, &oz, &m) >= 0);
    int32_t z = par_graph_find_value(g, "z");
    par_out_spec of = {.name = "f"};
    CU_ASSERT_FATAL(par_graph_add_node(g, "dequantize", NULL, 1, &z, 0, NULL, &of, &m) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(g, par_graph_find_value(g, "f"), &m) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    const par_graph_desc *d = par_graph_desc_of(g);

    par_case_mem c;
    par_case_mem_parts(d, 2, NULL, &c);
    /* data: two qu8 inputs of 32 bytes */
    CU_ASSERT_EQUAL(c.data, 64);
    /* values: x, y, z, f: 4 x 32 x 24 = 3072, plus z's labels (quantized node output): 32 x 16 = 512 */
    CU_ASSERT_EQUAL(c.ref_values, 3584);
    /* temporaries: the quantized add: 48 x (32 + 32) inputs + 80 x 32 outputs = 5632 (the dequantize of the labelled
     * z needs 24 x 32 + 24 x 32 = 1536) */
    CU_ASSERT_EQUAL(c.ref_temp, 5632);
    /* two backends, a quantized graph: two profiles may differ (the scheme): one further reference */
    CU_ASSERT_EQUAL(c.ref_kept, 3584);
    /* buffers: 2048 + two inputs (32 -> 64, + 64) = 256; output f: 128 + 512 + 128 + 128 = 896: 3200 */
    CU_ASSERT_EQUAL(c.buffers, 3200);
    /* backend: no constants, the intermediate z in qu8 = 32 */
    CU_ASSERT_EQUAL(c.backend, 32);
    /* 64 + 3584 + 3584 + max(5632, 3232) = 12864 */
    CU_ASSERT_EQUAL(c.total, 12864);
    par_graph_destroy(g);
}

static void test_limit(void)
{
    CU_ASSERT_EQUAL(par_case_mem_parse("6G"), INT64_C(6) << 30);
    CU_ASSERT_EQUAL(par_case_mem_parse("512M"), INT64_C(512) << 20);
    CU_ASSERT_EQUAL(par_case_mem_parse("1.5g"), INT64_C(3) << 29);
    CU_ASSERT_EQUAL(par_case_mem_parse("2kB"), 2048);
    CU_ASSERT_EQUAL(par_case_mem_parse("123"), 123);
    CU_ASSERT_EQUAL(par_case_mem_parse(""), -1);
    CU_ASSERT_EQUAL(par_case_mem_parse("x"), -1);
    CU_ASSERT_EQUAL(par_case_mem_parse("5Q"), -1);
    CU_ASSERT_EQUAL(par_case_mem_parse("-1G"), -1);
    CU_ASSERT_EQUAL(par_case_mem_parse(NULL), -1);

    setenv("PARITY_MEM_LIMIT", "3G", 1);
    CU_ASSERT_EQUAL(par_case_mem_limit(), INT64_C(3) << 30);
    unsetenv("PARITY_MEM_LIMIT");
    int64_t phys = (int64_t)sysconf(_SC_PHYS_PAGES) * (int64_t)sysconf(_SC_PAGESIZE);
    CU_ASSERT_EQUAL(par_case_mem_limit(), phys / 4);
    setenv("PARITY_MEM_LIMIT", "lots", 1); /* malformed: the default */
    CU_ASSERT_EQUAL(par_case_mem_limit(), phys / 4);
    unsetenv("PARITY_MEM_LIMIT");
}

static void test_reason(void)
{
    par_case_mem m = {.data = 100000000, .ref_values = 6000000000, .ref_temp = 2000000000, .ref_kept = 600000000,
                      .buffers = 1500000000, .backend = 600000000};
    m.total = 10700000000;
    char buf[200];
    CU_ASSERT_STRING_EQUAL(par_case_mem_reason(&m, 6000000000, buf, sizeof buf),
                           "needs ~10.7 GB (reference 8.6 GB, buffers 2.1 GB, data 100.0 MB), limit 6.0 GB");
    par_case_mem s = {.total = 3112, .ref_values = 288, .ref_temp = 144, .buffers = 2800, .data = 24};
    CU_ASSERT_STRING_EQUAL(par_case_mem_reason(&s, 1000, buf, sizeof buf),
                           "needs ~4 kB (reference 1 kB, buffers 3 kB, data 1 kB), limit 1 kB");
}

/* The work estimate that orders the runner's loaded cases: every element read and written, plus a weight's
 * multiply-adds per output element (its elements over its largest outer dimension). */
static void test_cost(void)
{
    par_graph *g = relu_graph();
    /* relu [2,3]: reads 6, writes 6 */
    CU_ASSERT_EQUAL(par_case_cost(par_graph_desc_of(g)), 12.0);
    par_graph_destroy(g);

    /* x [1,4,5,5] -> conv2d with w [8,4,3,3] (pad 1) -> y [1,8,5,5] */
    par_msg m;
    static float w[8 * 4 * 3 * 3];
    g = par_graph_create("conv");
    int32_t x = par_graph_add_input(g, "x", PAR_DTYPE_F32, 4, (int64_t[]){1, 4, 5, 5}, &m);
    int32_t wi = par_graph_add_const(g, "w", PAR_DTYPE_F32, 4, (int64_t[]){8, 4, 3, 3}, w, &m);
    const int64_t pad[4] = {1, 1, 1, 1};
    par_attr pads = par_a_ints("padding", 4, pad);
    par_out_spec o = {.name = "y"};
    CU_ASSERT_FATAL(par_graph_add_node(g, "conv2d", NULL, 2, (int32_t[]){x, wi}, 1, &pads, &o, &m) >= 0);
    CU_ASSERT_FATAL(par_graph_mark_output(g, par_graph_find_value(g, "y"), &m) == PAR_OK);
    CU_ASSERT_FATAL(par_graph_finalize(g, &m) == PAR_OK);
    /* writes 200; reads 100 + 288; multiply-adds 200 x 288 / 8 = 7200: 7788 */
    CU_ASSERT_EQUAL(par_case_cost(par_graph_desc_of(g)), 7788.0);
    par_graph_destroy(g);
}

static const CU_TestInfo tests[] = {
    {"cost", test_cost},
    {"float_graph", test_float_graph},
    {"quant_graph", test_quant_graph},
    {"limit", test_limit},
    {"reason", test_reason},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("case_mem", tests)
