/*
 * test_onnx_codec.c - the ONNX reader and writer (formats/pb.c, onnx.c, onnx_decode.c, onnx_read.c, onnx_write.c)
 * on hand-built bytes: each wire type, packed and unpacked repeated fields, a written model read back field by
 * field, and hostile inputs (every truncation of a model, a varint of 11 bytes, a length past the end, nesting past
 * the limit, data one byte short of its dims, dims whose product overflows), each an error that names the origin and the field, never a crash.
 * Field numbers are onnx.proto's: ModelProto.graph 7, GraphProto.node 1 / initializer 5 / input 11,
 * NodeProto.input 1 / output 2 / op_type 4 / attribute 5, AttributeProto.name 1 / g 6 / ints 8 / type 20,
 * TensorProto.dims 1 / data_type 2 / name 8 / raw_data 9.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/onnx.h"
#include "formats/pb.h"
#include "tmain.h"

/* A graph with one node Relu(x) -> y and an initializer w (float, dims as given, raw bytes as given). */
static void put_graph(par_pb_writer *w, const int64_t *dims, int nd, const void *raw, size_t raw_len, int packed)
{
    size_t g = par_pb_begin(w, 7);
    size_t n = par_pb_begin(w, 1);
    par_pb_put_string(w, 1, "x");
    par_pb_put_string(w, 2, "y");
    par_pb_put_string(w, 4, "Relu");
    par_pb_end(w, n);
    size_t t = par_pb_begin(w, 5);
    if (packed) {
        par_pb_writer d;
        par_pb_writer_init(&d);
        for (int i = 0; i < nd; i++) par_pb_put_varint(&d, (uint64_t)dims[i]);
        par_pb_put_bytes(w, 1, d.buf, d.len);
        par_pb_writer_free(&d);
    } else {
        for (int i = 0; i < nd; i++) par_pb_put_int(w, 1, dims[i]);
    }
    par_pb_put_uint(w, 2, PAR_ONNX_FLOAT);
    par_pb_put_string(w, 8, "w");
    par_pb_put_bytes(w, 9, raw, raw_len);
    par_pb_end(w, t);
    par_pb_end(w, g);
}

static void test_read_fields(void)
{
    float data[6] = {1, -2, 3.5f, 0, -0.0f, 6};
    int64_t dims[2] = {2, 3};
    for (int packed = 0; packed < 2; packed++) {
        par_pb_writer w;
        par_pb_writer_init(&w);
        par_pb_put_uint(&w, 1, 8); /* ir_version */
        put_graph(&w, dims, 2, data, sizeof data, packed);
        par_msg msg;
        par_onnx_model *m = par_onnx_parse(w.buf, w.len, "t.onnx", &msg);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        CU_ASSERT_EQUAL(m->ir_version, 8);
        CU_ASSERT_EQUAL(m->graph.n_nodes, 1);
        CU_ASSERT_STRING_EQUAL(m->graph.nodes[0].op_type, "Relu");
        CU_ASSERT_STRING_EQUAL(m->graph.nodes[0].inputs[0], "x");
        CU_ASSERT_EQUAL_FATAL(m->graph.n_initializers, 1);
        const par_onnx_tensor *t = &m->graph.initializers[0];
        CU_ASSERT_EQUAL(t->rank, 2); /* packed and unpacked dims read the same */
        CU_ASSERT_EQUAL(t->dims[0], 2);
        CU_ASSERT_EQUAL(t->dims[1], 3);
        CU_ASSERT_EQUAL(t->numel, 6);
        CU_ASSERT(t->data && memcmp(t->data, data, sizeof data) == 0);
        par_onnx_free(m);
        par_pb_writer_free(&w);
    }
}

static void test_write_read_back(void)
{
    par_onnx_model *m = par_onnx_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    par_onnx_graph *g = &m->graph;
    g->name = "g";
    g->nodes = par_onnx_alloc(m, sizeof *g->nodes);
    const char **in = par_onnx_alloc(m, 2 * sizeof(char *)), **out = par_onnx_alloc(m, sizeof(char *));
    par_onnx_attr *a = par_onnx_alloc(m, sizeof *a);
    int64_t *ints = par_onnx_alloc(m, 2 * sizeof(int64_t));
    CU_ASSERT_FATAL(g->nodes && in && out && a && ints);
    in[0] = "x", in[1] = "";
    out[0] = "y";
    ints[0] = -1, ints[1] = 1LL << 40;
    *a = (par_onnx_attr){.name = "perm", .type = PAR_ONNX_ATTR_INTS, .n = 2, .ints = ints};
    g->nodes[0] = (par_onnx_node){.name = "n0", .op_type = "Transpose", .domain = "", .n_inputs = 2, .inputs = in,
                                  .n_outputs = 1, .outputs = out, .n_attrs = 1, .attrs = a};
    g->n_nodes = 1;
    m->opsets = par_onnx_alloc(m, sizeof *m->opsets);
    m->opsets[0] = (par_onnx_opset){.domain = "", .version = 17};
    m->n_opsets = 1;
    uint8_t *bytes = NULL;
    size_t len = 0;
    par_msg msg;
    CU_ASSERT_EQUAL_FATAL(par_onnx_write(m, &bytes, &len, &msg), PAR_OK);
    par_onnx_model *r = par_onnx_parse(bytes, len, "w.onnx", &msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(par_onnx_opset_version(r, ""), 17);
    CU_ASSERT_EQUAL(par_onnx_opset_version(r, "ai.onnx"), 17);
    CU_ASSERT_EQUAL_FATAL(r->graph.n_nodes, 1);
    const par_onnx_node *n = &r->graph.nodes[0];
    CU_ASSERT_STRING_EQUAL(n->op_type, "Transpose");
    CU_ASSERT_EQUAL(n->n_inputs, 2);
    CU_ASSERT_STRING_EQUAL(n->inputs[1], ""); /* an absent optional input stays absent */
    CU_ASSERT_EQUAL_FATAL(n->n_attrs, 1);
    CU_ASSERT_EQUAL(n->attrs[0].type, PAR_ONNX_ATTR_INTS);
    CU_ASSERT_EQUAL_FATAL(n->attrs[0].n, 2);
    CU_ASSERT_EQUAL(n->attrs[0].ints[0], -1); /* negative ints: ten-byte varints */
    CU_ASSERT_EQUAL(n->attrs[0].ints[1], 1LL << 40);
    free(bytes);
    par_onnx_free(r);
    par_onnx_free(m);
}

/* An error for these bytes, whose message starts with the origin and contains `what`. */
static void expect_error(const uint8_t *b, size_t n, const char *what)
{
    par_msg msg = {{0}};
    par_onnx_model *m = par_onnx_parse(b, n, "h.onnx", &msg);
    CU_ASSERT_PTR_NULL(m);
    par_onnx_free(m);
    CU_ASSERT(strncmp(msg.text, "h.onnx: ", 8) == 0);
    if (what && !strstr(msg.text, what)) {
        fprintf(stderr, "  message '%s' lacks '%s'\n", msg.text, what);
        CU_FAIL("the message does not name the problem");
    }
}

static void test_hostile(void)
{
    /* a varint of 11 bytes */
    uint8_t v11[12] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    expect_error(v11, sizeof v11, NULL);
    /* graph (field 7): a length of 2^62 on a 12-byte buffer */
    uint8_t big[12] = {0x3a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x00, 0x00};
    expect_error(big, sizeof big, "graph");
    /* a length one past the end */
    uint8_t past[4] = {0x3a, 0x03, 0x0a, 0x00};
    expect_error(past, sizeof past, "graph");
    /* raw_data one byte short of 2 x 3 floats */
    float data[6] = {0};
    int64_t dims[2] = {2, 3};
    par_pb_writer w;
    par_pb_writer_init(&w);
    put_graph(&w, dims, 2, data, sizeof data - 1, 0);
    expect_error(w.buf, w.len, "initializer");
    par_pb_writer_free(&w);
    /* dims whose product overflows 64 bits */
    int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40};
    par_pb_writer_init(&w);
    put_graph(&w, huge, 3, data, sizeof data, 1);
    expect_error(w.buf, w.len, "initializer");
    par_pb_writer_free(&w);
    /* a negative dimension */
    int64_t neg[2] = {2, -3};
    par_pb_writer_init(&w);
    put_graph(&w, neg, 2, data, sizeof data, 0);
    expect_error(w.buf, w.len, "initializer");
    par_pb_writer_free(&w);
}

/* Graphs nested through If-style graph attributes, `depth` deep. */
static void nest(par_pb_writer *w, int depth)
{
    size_t n = par_pb_begin(w, 1); /* GraphProto.node */
    par_pb_put_string(w, 4, "If");
    size_t a = par_pb_begin(w, 5); /* NodeProto.attribute */
    par_pb_put_string(w, 1, "then_branch");
    par_pb_put_uint(w, 20, PAR_ONNX_ATTR_GRAPH);
    size_t g = par_pb_begin(w, 6); /* AttributeProto.g */
    if (depth > 1) nest(w, depth - 1);
    par_pb_end(w, g);
    par_pb_end(w, a);
    par_pb_end(w, n);
}

static void test_depth(void)
{
    par_pb_writer w;
    par_pb_writer_init(&w);
    size_t g = par_pb_begin(&w, 7);
    nest(&w, 40);
    par_pb_end(&w, g);
    CU_ASSERT_FATAL(!w.oom);
    expect_error(w.buf, w.len, NULL);
    par_pb_writer_free(&w);
    /* a shallow one reads */
    par_pb_writer_init(&w);
    g = par_pb_begin(&w, 7);
    nest(&w, 2);
    par_pb_end(&w, g);
    par_msg msg;
    par_onnx_model *m = par_onnx_parse(w.buf, w.len, "d.onnx", &msg);
    CU_ASSERT_PTR_NOT_NULL(m);
    par_onnx_free(m);
    par_pb_writer_free(&w);
}

/* Every truncation of a real model is an error naming the file, never a crash (ASan / valgrind builds check the
 * reads). The model is written by the writer, so the test needs no file. */
static void test_truncations(void)
{
    float data[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    par_pb_writer w;
    par_pb_writer_init(&w);
    par_pb_put_uint(&w, 1, 8);
    put_graph(&w, dims, 2, data, sizeof data, 1);
    int refused = 0, accepted = 0;
    for (size_t n = 0; n < w.len; n++) {
        par_msg msg = {{0}};
        par_onnx_model *m = par_onnx_parse(w.buf, n, "cut.onnx", &msg);
        if (m) {
            accepted++; /* a cut between two fields is a shorter valid message */
            par_onnx_free(m);
        } else {
            refused++;
            CU_ASSERT(strncmp(msg.text, "cut.onnx: ", 10) == 0);
        }
    }
    CU_ASSERT(refused > 0);
    CU_ASSERT(refused > accepted);
    par_pb_writer_free(&w);
}

static const CU_TestInfo tests[] = {
    {"fields of each wire type, packed and unpacked", test_read_fields},
    {"a written model reads back field by field", test_write_read_back},
    {"hostile lengths, varints, data and dims", test_hostile},
    {"nesting past the limit is an error", test_depth},
    {"every truncation is an error naming the file", test_truncations},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("onnx_codec", tests)
