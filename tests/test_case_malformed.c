/*
 * test_case_malformed.c - malformed case documents, one test per class (not JSON, truncated, wrong types, numbers,
 * shapes and lengths, missing and unknown fields, names, NaN and infinities, quantization, graph errors): each checks
 * that par_case_parse (or par_case_load) returns NULL and that the message names the JSON path and the reason.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/case.h"
#include "core/json_dupkeys.h"
#include "case_helpers.h"
#include "tmain.h"

/* ------------------------------------------------------------------------------------------------------------------
 * Malformed input: one test per class
 * ---------------------------------------------------------------------------------------------------------------- */

static void test_bad_not_json(void)
{
    expect_error("hello", "$", "invalid JSON at line 1, column 1");
    expect_error("", "$", "unexpected end of input");
    expect_error(HDR "'id': 'x'} trailing", "$", "invalid JSON at line 1");
    expect_error("{'a': 1,}", "$", "invalid JSON");
    expect_error("{'schema': 'parity.case',\n 'version': 1,\n 'id': 'x' 'seed': 1}", "$", "line 3, column 12");
    expect_error("{'s': '\xff'}", "$", "invalid JSON"); /* not UTF-8 */
    char deep[400];
    memset(deep, '[', 300);
    deep[300] = 0;
    expect_error(deep, "$", "invalid JSON"); /* nesting deeper than the limit */
    par_msg m;
    CU_ASSERT_PTR_NULL(par_case_load(DATA "bad_syntax.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "bad_syntax.json: $: invalid JSON at line 5, column 51"));
    CU_ASSERT_PTR_NULL(par_case_load(DATA "no_such_file.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "no_such_file.json: $: cannot open"));
    /* an embedded NUL ends the document early: the rest is trailing data */
    const char nul[] = "{\"schema\": \"parity.case\"}\0xyz";
    CU_ASSERT_PTR_NULL(par_case_parse(nul, sizeof nul - 1, "t.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "t.json: $: invalid JSON"));
}

static void test_bad_truncated(void)
{
    char *full = J(DOC_IN(X_IN));
    par_msg m;
    par_case *c = par_case_parse(full, strlen(full), "t.json", &m);
    CU_ASSERT_PTR_NOT_NULL(c); /* the untruncated text is valid */
    par_case_destroy(c);
    int all = 1;
    for (size_t n = 0; n < strlen(full); n++) { /* every proper prefix fails with a syntax error */
        c = par_case_parse(full, n, "t.json", &m);
        if (c || !strstr(m.text, "t.json: $: invalid JSON")) all = 0;
        par_case_destroy(c);
    }
    CU_ASSERT(all);
    free(full);
}

static void test_bad_types(void)
{
    expect_error("[1, 2]", "$", "expected an object, got an array");
    expect_error("null", "$", "expected an object, got null");
    expect_error("{'schema': 'parity.model', 'version': 1}", "$.schema", "expected \"parity.case\"");
    expect_error("{'schema': 'parity.case', 'version': 2}", "$.version", "unsupported version 2");
    expect_error("{'schema': 'parity.case', 'version': '1'}", "$.version", "expected an integer, got a string");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': '2x3', 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "expected an array of dimensions, got a string");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 5, 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].dtype", "expected a string, got an integer");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f64', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].dtype", "unknown dtype 'f64'");
    expect_error(DOC_IN("{'name': ['x'], 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].name", "expected a string, got an array");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': '1'}}"),
                 "$.inputs[0].init.value", "expected a number, got a string");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1, "
                        "'fan_in': 1}}"),
                 "$.inputs[0].init.fan_in", "expected true or false, got an integer");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': 'abc'}"), "$.inputs[0].data",
                 "expected an array of numbers or {\"file\": ...}, got a string");
    expect_error(DOC_IN("7"), "$.inputs[0]", "expected an object, got an integer");
    expect_error(HDR "'inputs': {}, 'outputs': ['y']}", "$.inputs", "expected an array, got an object");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'stride': '2'}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.stride", "expected a list of integers, got a string");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'groups': 1.5}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.groups", "expected an integer, got a number");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'stride': [1, 1, 1]}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.stride", "expected 2 elements, got 3");
    expect_error(DOC_NODE("{'op': 'conv2d', 'inputs': ['x', 'x'], 'attrs': {'pad_mode': 'full'}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.pad_mode", "'full' is not one of explicit|same|valid");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': [3], 'outputs': ['y']}"), "$.nodes[0].inputs[0]",
                 "expected a value name or null, got an integer");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': [{'name': 'y', 'dtype': 'f32', 'scale': 1}]}"),
                 "$.nodes[0].outputs[0].scale", "only for outputs declared qu8, qs8, qs16 or i32");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': 'y'}", "$.outputs",
                 "expected an array of value names, got a string");
    expect_error(HDR "'options': {'repeat': 0}, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.options.repeat", "0 is out of range [1, 1000000]");
    expect_error(HDR "'options': {'timeout_s': -1}, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.options.timeout_s", "outside (0, 86400]");
    expect_error(DOC_IN("{'name': 'x\\u0000y', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].name", "NUL character");
}

static void test_bad_numbers(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2, -1], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[1]", "-1 is out of range [1, ");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [0], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[0]", "0 is out of range [1, ");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [1e30], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[0]", "expected an integer, got a number");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [99999999999999999999999], "
                        "'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape[0]", "is out of range");
    expect_error(HDR "'seed': -1, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.seed",
                 "-1 is negative");
    expect_error(HDR "'seed': 1e3, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.seed",
                 "expected an integer, got a number");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'low': -1e400, "
                        "'high': 1}}"),
                 "$.inputs[0].init.low", "infinite numbers are not allowed");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'low': 2, "
                        "'high': 1}}"),
                 "$.inputs[0].init", "uniform: low 2 is greater than high 1");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f16', 'shape': [2], 'init': {'dist': 'uniform', 'low': -1e5, "
                        "'high': 1}}"),
                 "$.inputs[0].init", "bounds must lie within");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'normal', 'mean': 0, "
                        "'std': -1}}"),
                 "$.inputs[0].init", "std -1 is negative");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'edge', 'max': 1, 'seed': -5}}"),
                 "$.inputs[0].init.seed", "-5 is negative");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [1, 1e39]}"), "$.inputs[0].data[1]",
                 "1e+39 overflows f32");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f16', 'shape': [2], 'data': [70000, 1]}"), "$.inputs[0].data[0]",
                 "70000 overflows f16");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'data': [1, 256], 'quant': {'scale': 1}}"),
                 "$.inputs[0].data[1]", "256 is out of range [0, 255]");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qs8', 'shape': [2], 'data': [1, 0.5], 'quant': {'scale': 1}}"),
                 "$.inputs[0].data[1]", "expected an integer, got a number");
}

static void test_bad_shapes(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [1, 1, 1, 1, 1, 1, 1], "
                        "'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "rank 7 exceeds the maximum 6");
    /* a product that overflows int64 if multiplied naively: 2^28 six times */
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [268435456, 268435456, 268435456, 268435456, "
                        "268435456, 268435456], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "more than ");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [65536, 65536], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].shape", "more than ");
    /* each tensor within the limit, together over it */
    char doc[600];
    long long half = (long long)(PAR_CASE_MAX_ELEMS / 2 + 1);
    snprintf(doc, sizeof doc,
             HDR "'inputs': [{'name': 'x', 'dtype': 'qu8', 'shape': [%lld], 'init': {'dist': 'const', 'value': 1}, "
                 "'quant': {'scale': 1}}, {'name': 'z', 'dtype': 'qu8', 'shape': [%lld], 'init': {'dist': 'const', "
                 "'value': 1}, 'quant': {'scale': 1}}], 'nodes': [" RELU "], 'outputs': ['y']}",
             half, half);
    expect_error(doc, "$.inputs[1].shape", "elements in all");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2, 3], 'data': [1, 2, 3, 4, 5]}"), "$.inputs[0].data",
                 "expected 6 values for shape [2,3], got 5");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2, 3], 'data': [1, 2, 3, 4, 5, 6, 7]}"),
                 "$.inputs[0].data", "expected 6 values for shape [2,3], got 7");
}

static void test_bad_missing(void)
{
    expect_error("{'version': 1}", "$.schema", "missing");
    expect_error("{'schema': 'parity.case'}", "$.version", "missing");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "]}", "$.outputs", "missing");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': []}", "$.outputs",
                 "at least one output");
    expect_error(DOC_IN("{'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"), "$.inputs[0].name",
                 "missing");
    expect_error(DOC_IN("{'name': 'x', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"), "$.inputs[0].dtype",
                 "missing");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'init': {'dist': 'const', 'value': 1}}"), "$.inputs[0].shape",
                 "missing");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2]}"), "$.inputs[0]", "missing 'init' or 'data'");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [1, 2], "
                        "'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0]", "give 'init' or 'data', not both");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'low': 0, 'high': 1}}"),
                 "$.inputs[0].init.dist", "missing");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'low': 0}}"),
                 "$.inputs[0].init.high", "missing (required for uniform)");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'gauss', 'mean': 0}}"),
                 "$.inputs[0].init.dist", "unknown distribution 'gauss'");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].quant", "missing (required for qu8)");
    expect_error(DOC_NODE("{'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0].op", "missing");
    expect_error(DOC_NODE("{'op': 'relu', 'outputs': ['y']}"), "$.nodes[0].inputs", "missing");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x']}"), "$.nodes[0].outputs", "missing");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': []}"), "$.nodes[0].outputs",
                 "relu has 1 output, got 0");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': [], 'outputs': ['y']}"), "$.nodes[0].inputs",
                 "relu takes 1 to 1 inputs, got 0");
    expect_error(DOC_NODE("{'op': 'max_pool2d', 'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0]",
                 "attribute 'kernel' is required");
    expect_error(DOC_NODE("{'op': 'quantize', 'inputs': ['x'], 'outputs': [{'name': 'y', 'dtype': 'qu8'}]}"),
                 "$.nodes[0].outputs[0].scale", "missing (required for qu8)");
}

static void test_bad_unknown_fields(void)
{
    expect_error(HDR "'seeed': 3, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.seeed",
                 "unknown field (expected one of: schema, version, id");
    expect_error(DOC_IN("{'name': 'x', 'dtyp': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].dtyp", "unknown field");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'uniform', 'lo': 0, "
                        "'high': 1}}"),
                 "$.inputs[0].init.lo", "unknown field (expected one of: dist, low, high, fan_in, seed)");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1, "
                        "'std': 1}}"),
                 "$.inputs[0].init.std", "unknown field");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': ['y'], 'attr': {}}"), "$.nodes[0].attr",
                 "unknown field");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'attrs': {'alpha': 1}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.alpha", "unknown attribute: relu takes none");
    expect_error(DOC_NODE("{'op': 'conv3d', 'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0].op",
                 "unknown op 'conv3d'");
    expect_error(HDR "'options': {'repeats': 2}, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.options.repeats", "unknown field");
    par_msg m;
    /* the one top-level field that is ignored: the reference outputs `parity export` appends */
    par_case *c = parse_j(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y'], "
                              "'reference': {'arith': 'f32', 'outputs': []}}",
                          &m);
    CU_ASSERT_PTR_NOT_NULL(c);
    par_case_destroy(c);
    CU_ASSERT_PTR_NULL(par_case_load(DATA "bad_typo.json", &m));
    CU_ASSERT_PTR_NOT_NULL(strstr(m.text, "bad_typo.json: $.nodes[0].attrs.axsi: unknown attribute for softmax"));
}

static void test_bad_names(void)
{
    expect_error(DOC_IN(X_IN ", " X_IN), "$.inputs[1].name", "duplicate name 'x'");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'x', 'dtype': 'f32', 'shape': [1], 'data': [1]}],"
                     "'nodes': [" RELU "], 'outputs': ['y']}",
                 "$.constants[0].name", "duplicate name 'x'");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['x'], 'outputs': ['x']}"), "$.nodes[0].outputs[0]",
                 "duplicate name 'x'");
    expect_error(DOC_NODE(RELU ", " RELU), "$.nodes[1].outputs[0]", "duplicate name 'y'");
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['q'], 'outputs': ['y']}"), "$.nodes[0].inputs[0]",
                 "no value named 'q'");
    /* topological order: a node may not use a value produced later */
    expect_error(DOC_NODE("{'op': 'relu', 'inputs': ['z'], 'outputs': ['y']}, "
                          "{'op': 'relu', 'inputs': ['x'], 'outputs': ['z']}"),
                 "$.nodes[0].inputs[0]", "no value named 'z'");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['w']}", "$.outputs[0]",
                 "no value named 'w'");
    expect_error(HDR "'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y', 'y']}", "$.outputs[1]",
                 "listed twice");
    expect_error(DOC_IN("{'name': '', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}}"),
                 "$.inputs[0].name", "empty name");
    expect_error(HDR "'id': '', 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$.id", "empty id");
}

static void test_bad_nan_inf(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [1, NaN]}"), "$.inputs[0].data[1]",
                 "NaN is not allowed");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': [-Infinity, 1]}"), "$.inputs[0].data[0]",
                 "infinite numbers are not allowed");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'data': ['nan', 1]}"), "$.inputs[0].data[0]",
                 "expected a number, \"inf\" or \"-inf\", got \"nan\"");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f16', 'shape': [2], 'data': [1, 'Inf']}"), "$.inputs[0].data[1]",
                 "expected a number, \"inf\" or \"-inf\", got \"Inf\"");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'i32', 'shape': [2], 'data': ['inf', 1]}"), "$.inputs[0].data[0]",
                 "expected an integer");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': NaN}}"),
                 "$.inputs[0].init.value", "NaN is not allowed");
    expect_error(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'max': NaN}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.max", "NaN is not allowed");
    expect_error(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'max': 'nan'}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.max", "expected a number, \"inf\" or \"-inf\", got \"nan\"");
    expect_error(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'max': Infinity}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs.max", "infinite numbers are not allowed");
    /* the strings "inf" / "-inf" are the way to write infinite float attributes */
    par_msg m;
    par_case *c = parse_j(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'min': '-inf', 'max': 'inf'}, "
                                   "'outputs': ['y']}"),
                          &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(isinf(par_attr_float(&par_graph_desc_of(c->graph)->nodes[0], "max", 0)));
    par_case_destroy(c);
    c = parse_j(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'min': '-inf', 'max': 2}, 'outputs': ['y']}"), &m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    char *t = par_case_to_json(c, 0);
    CU_ASSERT_PTR_NULL(strstr(t, "inf")); /* -inf is clamp's default for min: not written */
    free(t);
    round_trip(c, 1);
    par_case_destroy(c);
    c = parse_j(DOC_NODE("{'op': 'clamp', 'inputs': ['x'], 'attrs': {'min': 0, 'max': '-inf'}, 'outputs': ['y']}"), &m);
    if (c) { /* whether the graph accepts min > max is its business; if it does, -inf must be written as a string */
        t = par_case_to_json(c, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"max\": \"-inf\""));
        free(t);
        par_case_destroy(c);
    }
}

static void test_bad_quant(void)
{
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 1}}"),
                 "$.inputs[0].quant", "quantization is only for qu8, qs8, qs16 and i32 tensors");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 0.1, 'zero_point': 300}}"),
                 "$.inputs[0].quant.zero_point", "300 is out of range [0, 255]");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 0}}"),
                 "$.inputs[0].quant.scale", "must be > 0");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qu8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'scale': 1e-50}}"),
                 "$.inputs[0].quant.scale", "finite f32");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'qs8', 'shape': [2], 'init': {'dist': 'const', 'value': 1}, "
                        "'quant': {'axis': 0, 'scales': [1, 1]}}"),
                 "$.inputs[0].quant", "per-channel scales are for qs8 constants only");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'w', 'dtype': 'qs8', 'shape': [3, 2], "
                     "'data': [1, 2, 3, 4, 5, 6], 'quant': {'axis': 0, 'scales': [1, 2]}}], 'nodes': [" RELU "], "
                     "'outputs': ['y']}",
                 "$.constants[0].quant.scales", "expected 3 scales (dimension 0), got 2");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'w', 'dtype': 'qs8', 'shape': [3, 2], "
                     "'data': [1, 2, 3, 4, 5, 6], 'quant': {'axis': 2, 'scales': [1, 2]}}], 'nodes': [" RELU "], "
                     "'outputs': ['y']}",
                 "$.constants[0].quant.axis", "2 is out of range [-2, 1]");
    expect_error(HDR "'inputs': [" X_IN "], 'constants': [{'name': 'w', 'dtype': 'qs8', 'shape': [3, 2], "
                     "'data': [1, 2, 3, 4, 5, 6], 'quant': {'axis': 0, 'scales': [1, 2, -1]}}], 'nodes': [" RELU "], "
                     "'outputs': ['y']}",
                 "$.constants[0].quant.scales[2]", "must be > 0");
}

/* A graph-level error (the graph builder's message) comes with the node's path. */
static void test_bad_graph(void)
{
    expect_error(HDR "'inputs': [{'name': 'x', 'dtype': 'f32', 'shape': [1, 3, 4, 4], 'init': {'dist': 'const', "
                     "'value': 1}}], 'constants': [{'name': 'w', 'dtype': 'f32', 'shape': [4, 1, 1, 1], "
                     "'init': {'dist': 'const', 'value': 1}}], 'nodes': [{'op': 'conv2d', 'inputs': ['x', 'w'], "
                     "'attrs': {'groups': 2}, 'outputs': ['y']}], 'outputs': ['y']}",
                 "$.nodes[0]", "conv2d");
    expect_error(HDR "'inputs': [" X_IN "], 'outputs': ['x']}", "$.outputs[0]", "not computed by a node");
}

/* json-c keeps the last of duplicate keys; the reader refuses them, at the object's path, whatever the depth, and
 * after decoding escapes. */
static void test_bad_duplicate_keys(void)
{
    expect_error(DOC_NODE("{'op': 'relu', 'op': 'sigmoid', 'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0]",
                 "duplicate key 'op'");
    expect_error(HDR "'version': 1, 'inputs': [" X_IN "], 'nodes': [" RELU "], 'outputs': ['y']}", "$",
                 "duplicate key 'version'");
    expect_error(DOC_NODE("{'op': 'softmax', 'inputs': ['x'], 'attrs': {'axis': 1, 'axis': 0}, 'outputs': ['y']}"),
                 "$.nodes[0].attrs", "duplicate key 'axis'");
    expect_error(DOC_IN("{'name': 'x', 'dtype': 'f32', 'shape': [2], 'init': {'dist': 'const', 'value': 1, "
                        "'value': 2}}"),
                 "$.inputs[0].init", "duplicate key 'value'");
    /* "\u006fp" decodes to "op" */
    expect_error(DOC_NODE("{'op': 'relu', '\\u006fp': 'sigmoid', 'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0]",
                 "duplicate key 'op'");
    /* the same key in two objects, and keys that differ only in length, are not duplicates */
    par_msg m;
    par_case *c = parse_j(HDR "'inputs': [" X_IN "], 'nodes': [" RELU ", {'op': 'relu', 'inputs': ['y'], "
                              "'outputs': ['z']}], 'outputs': ['z']}",
                          &m);
    CU_ASSERT_PTR_NOT_NULL(c);
    par_case_destroy(c);
    expect_error(DOC_NODE("{'op': 'relu', 'o': 1, 'inputs': ['x'], 'outputs': ['y']}"), "$.nodes[0].o",
                 "unknown field");
}

/* The raw-text walk the case and the report readers share (core/json_dupkeys.h): integers json-c would saturate
 * are found on both sides of each 64-bit bound, at their own path; a path too long for its buffer ends in "...". */
static void test_raw_walk(void)
{
    char path[64], what[64];
    const unsigned both = PAR_JSON_DUPKEYS | PAR_JSON_BIGINTS;
    static const struct {
        const char *text;
        unsigned found;
        const char *path, *what;
    } rows[] = {
        {"{\"a\": [1, 18446744073709551615, -9223372036854775808, 1e400, -0]}", 0, "", ""},
        {"{\"a\": [1, 18446744073709551616]}", PAR_JSON_BIGINTS, "a[1]", "18446744073709551616"},
        {"{\"a\": {\"seed\": -9223372036854775809}}", PAR_JSON_BIGINTS, "a.seed", "-9223372036854775809"},
        {"{\"s\": 123456789012345678901234567890}", PAR_JSON_BIGINTS, "s", "123456789012345678901234567890"},
        {"[{\"k\": 1, \"k\": 2}]", PAR_JSON_DUPKEYS, "[0]", "k"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        unsigned f = par_json_check_raw(rows[i].text, strlen(rows[i].text), both, "", path, sizeof path, what,
                                        sizeof what);
        CU_ASSERT_EQUAL(f, rows[i].found);
        CU_ASSERT_STRING_EQUAL(path, rows[i].found ? rows[i].path : "");
        CU_ASSERT_STRING_EQUAL(what, rows[i].what);
    }
    /* only what is asked for */
    const char *big = "{\"s\": 123456789012345678901234567890}";
    CU_ASSERT_EQUAL(par_json_check_raw(big, strlen(big), PAR_JSON_DUPKEYS, "$", path, sizeof path, what, sizeof what),
                    0);
    const char *deep = "{\"aaaaaaaaaaaaaaaaaaaa\": {\"bbbbbbbbbbbbbbbbbbbb\": {\"cccccccccccccccccccc\": "
                       "{\"d\": 1, \"d\": 2}}}}";
    char small[32];
    CU_ASSERT_EQUAL(par_json_check_raw(deep, strlen(deep), both, "$", small, sizeof small, what, sizeof what),
                    PAR_JSON_DUPKEYS);
    CU_ASSERT_STRING_EQUAL(small, "$.aaaaaaaaaaaaaaaaaaaa...");
    CU_ASSERT_STRING_EQUAL(what, "d");
}

static const CU_TestInfo tests[] = {
    {"malformed: not JSON", test_bad_not_json},
    {"malformed: truncated", test_bad_truncated},
    {"malformed: wrong types", test_bad_types},
    {"malformed: numbers", test_bad_numbers},
    {"malformed: shapes and lengths", test_bad_shapes},
    {"malformed: missing fields", test_bad_missing},
    {"malformed: unknown fields", test_bad_unknown_fields},
    {"malformed: names", test_bad_names},
    {"malformed: NaN and infinities", test_bad_nan_inf},
    {"malformed: quantization", test_bad_quant},
    {"malformed: graph errors", test_bad_graph},
    {"malformed: duplicate keys", test_bad_duplicate_keys},
    {"malformed: the raw-text walk both readers share", test_raw_walk},
    CU_TEST_INFO_NULL,
};

PAR_TEST_MAIN("case_malformed", tests)

